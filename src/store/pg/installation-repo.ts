import type { AsyncStore, InstallationKey } from '../ports.js';
import type { Query } from './query.js';

// Slack installations on PostgreSQL, as sqlite/installation-repo.ts keeps them: one row per team
// (or per enterprise for an org-wide install, team_id ''), upserted.

const installKey = (key: InstallationKey) => [key.teamId ?? '', key.enterpriseId ?? ''];

export function pgInstallations(q: Query): AsyncStore['installations'] {
  return {
    async save(key, userId, json, at) {
      await q(
        `INSERT INTO slack_installations (team_id, enterprise_id, user_id, installation, updated_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (team_id, enterprise_id) DO UPDATE SET user_id = excluded.user_id,
           installation = excluded.installation, updated_at = excluded.updated_at`,
        [...installKey(key), userId ?? null, json, at],
      );
    },
    async find(key) {
      const r = await q<{ installation: string }>(
        'SELECT installation FROM slack_installations WHERE team_id = $1 AND enterprise_id = $2',
        installKey(key),
      );
      if (r.rows[0]) return r.rows[0].installation;
      // An org-wide install answers for every team of its enterprise.
      if (!key.enterpriseId) return undefined;
      const org = await q<{ installation: string }>(
        "SELECT installation FROM slack_installations WHERE enterprise_id = $1 AND team_id = ''",
        [key.enterpriseId],
      );
      return org.rows[0]?.installation;
    },
    async delete(key) {
      return (
        (await q('DELETE FROM slack_installations WHERE team_id = $1 AND enterprise_id = $2', installKey(key)))
          .rowCount ?? 0
      );
    },
    async count() {
      const r = await q<{ n: number }>('SELECT COUNT(*)::int AS n FROM slack_installations');
      return r.rows[0]?.n ?? 0;
    },
  };
}
