import type Database from 'better-sqlite3';
import type { InstallationKey } from '../ports.js';

// Slack OAuth installations as Bolt hands them over (JSON). Bolt's InstallationStore adapter lives
// in the Slack connector; this is only the table access, so the store stays SDK-agnostic.

export interface InstallationRepo {
  save(key: InstallationKey, userId: string | undefined, installationJson: string, at: number): void;
  find(key: InstallationKey): string | undefined;
  delete(key: InstallationKey): number;
  count(): number;
}

export function createInstallationRepo(db: Database.Database): InstallationRepo {
  const save = db.prepare(
    `INSERT INTO slack_installations (team_id, enterprise_id, user_id, installation, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (team_id, enterprise_id) DO UPDATE SET user_id = excluded.user_id,
       installation = excluded.installation, updated_at = excluded.updated_at`,
  );
  const find = db.prepare<[string, string], { installation: string }>(
    'SELECT installation FROM slack_installations WHERE team_id = ? AND enterprise_id = ?',
  );
  // An org-wide install answers for every team of its enterprise.
  const findOrg = db.prepare<[string], { installation: string }>(
    "SELECT installation FROM slack_installations WHERE enterprise_id = ? AND team_id = ''",
  );
  const del = db.prepare('DELETE FROM slack_installations WHERE team_id = ? AND enterprise_id = ?');
  const count = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM slack_installations');
  return {
    save(key, userId, json, at) {
      save.run(key.teamId ?? '', key.enterpriseId ?? '', userId ?? null, json, at);
    },
    find(key) {
      const row = find.get(key.teamId ?? '', key.enterpriseId ?? '');
      if (row) return row.installation;
      if (key.enterpriseId) return findOrg.get(key.enterpriseId)?.installation;
      return undefined;
    },
    delete(key) {
      return del.run(key.teamId ?? '', key.enterpriseId ?? '').changes;
    },
    count() {
      return count.get()?.n ?? 0;
    },
  };
}
