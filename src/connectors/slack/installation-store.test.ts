import { describe, expect, it } from 'vitest';
import { scrubSecrets } from '../../logger.js';
import { openStore } from '../../store/sqlite/index.js';
import { createInstallationStore } from './installation-store.js';

// The tokens of OAuth installs are secrets the process holds: once it holds one (stored after an
// install, or loaded for an event after a restart) it is scrubbed by value, so an encoded form
// (base64 in a Basic credential, hex) never reaches a log either.

const hex = (s: string) => Buffer.from(s).toString('hex');

describe('the installation store registers the tokens it holds', () => {
  it('when an install is stored, and when one stored by an earlier process is loaded', async () => {
    const store = openStore(':memory:');
    try {
      const installs = createInstallationStore(store.installations, () => 1);
      const stored = { bot: 'xoxb-11-22-storedTokenValue', refresh: 'xoxe-1-storedRefreshValue' };
      const loaded = { bot: 'xoxb-33-44-loadedTokenValue', user: 'xoxp-55-66-loadedUserValue' };
      const line = () => `${hex(stored.bot)} ${hex(stored.refresh)} ${hex(loaded.bot)} ${hex(loaded.user)}`;
      expect(scrubSecrets(line())).toBe(line()); // unknown values, not matched by any pattern

      await installs.storeInstallation({
        team: { id: 'T1' },
        enterprise: undefined,
        user: { id: 'U1', token: undefined, scopes: undefined },
        bot: { token: stored.bot, refreshToken: stored.refresh, scopes: [], id: 'B1', userId: 'UB1' },
        isEnterpriseInstall: false,
      });
      // Another process's install, in the table only: registered when loaded for an event.
      const other = {
        team: { id: 'T2' },
        user: { id: 'U2', token: loaded.user },
        bot: { token: loaded.bot, scopes: [], id: 'B2', userId: 'UB2' },
        isEnterpriseInstall: false,
      };
      await store.installations.save({ teamId: 'T2', enterpriseId: undefined }, 'U2', JSON.stringify(other), 1);
      expect(scrubSecrets(hex(loaded.bot))).toBe(hex(loaded.bot));
      await installs.fetchInstallation({ teamId: 'T2', enterpriseId: undefined, isEnterpriseInstall: false });

      expect(scrubSecrets(line())).toBe('[redacted] [redacted] [redacted] [redacted]');
    } finally {
      await store.close();
    }
  });
});
