import type { Installation, InstallationQuery, InstallationStore } from '@slack/bolt';
import { registerHeldSecrets } from '../../logger.js';
import type { InstallationStore as StoredInstallations } from '../../store/ports.js';

// Bolt's installation store on the bridge's table (slack_installations, SQLite or PostgreSQL). An org-wide
// install is kept under its enterprise id with an empty team id.

type AnyInstallation = Installation<'v1' | 'v2', boolean>;

/**
 * The secrets an install carries (its tokens, refresh tokens, the incoming webhook's URL):
 * registered for scrubbing by value as soon as the process holds them, so an encoded or glued
 * form (base64, hex, split by an invisible character) never reaches a log either.
 */
export function installationSecrets(i: AnyInstallation): (string | undefined)[] {
  return [i.bot?.token, i.bot?.refreshToken, i.user?.token, i.user?.refreshToken, i.incomingWebhook?.url];
}

/** The store's installations (either backend). */
export type Installations = StoredInstallations;

export function createInstallationStore(repo: Installations, now: () => number = Date.now): InstallationStore {
  return {
    async storeInstallation(installation: AnyInstallation): Promise<void> {
      registerHeldSecrets(installationSecrets(installation));
      const enterpriseId = installation.enterprise?.id;
      const key = installation.isEnterpriseInstall
        ? { teamId: undefined, enterpriseId }
        : { teamId: installation.team?.id, enterpriseId };
      await repo.save(key, installation.user?.id, JSON.stringify(installation), now());
    },
    async fetchInstallation(query: InstallationQuery<boolean>): Promise<AnyInstallation> {
      const key = query.isEnterpriseInstall
        ? { teamId: undefined, enterpriseId: query.enterpriseId }
        : { teamId: query.teamId, enterpriseId: query.enterpriseId };
      const json = await repo.find(key);
      if (json === undefined)
        throw new Error(`no Slack installation for ${query.enterpriseId ?? ''}/${query.teamId ?? ''}`);
      const installation = JSON.parse(json) as AnyInstallation;
      registerHeldSecrets(installationSecrets(installation));
      return installation;
    },
    async deleteInstallation(query: InstallationQuery<boolean>): Promise<void> {
      await repo.delete(
        query.isEnterpriseInstall
          ? { teamId: undefined, enterpriseId: query.enterpriseId }
          : { teamId: query.teamId, enterpriseId: query.enterpriseId },
      );
    },
  };
}
