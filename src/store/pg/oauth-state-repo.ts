import type { OAuthStateStore } from '../ports.js';
import type { Query } from './query.js';

// Slack OAuth install links' states on PostgreSQL (migration postgres/0003), as
// sqlite/oauth-state-repo.ts keeps them. Consuming is one
// DELETE: of two replicas handed the same redirect, the second waits for the first's row lock,
// then finds the row gone, so exactly one succeeds.

export function pgOAuthStates(q: Query): OAuthStateStore {
  return {
    async issue(state, expiresAt, limit) {
      // A duplicate state is an error, not a race to settle: states are 24 random bytes.
      if (limit === undefined) {
        await q('INSERT INTO oauth_states (state, expires_at) VALUES ($1, $2)', [state, expiresAt]);
        return true;
      }
      // Count and insert in one statement. Two replicas inserting for one address at the same
      // instant may each see max-1 and both succeed: the bound is "a few", never evicting.
      const r = await q(
        `INSERT INTO oauth_states (state, expires_at, client)
         SELECT $1::text, $2::bigint, $3::text
         WHERE (SELECT COUNT(*) FROM oauth_states WHERE client = $3::text AND expires_at >= $4::bigint) < $5::bigint`,
        [state, expiresAt, limit.client, limit.now, limit.max],
      );
      const stored = (r.rowCount ?? 0) === 1;
      if (stored && limit.total !== undefined) {
        // The newest `total` stay (by expiry, then state): the oldest pending states go first.
        await q(
          `DELETE FROM oauth_states WHERE state IN
             (SELECT state FROM oauth_states ORDER BY expires_at DESC, state DESC OFFSET $1::bigint)`,
          [Math.max(1, limit.total)],
        );
      }
      return stored;
    },
    async consume(state, now) {
      // Used up whatever happens next: an expired state is deleted too.
      const r = await q<{ expires_at: number }>('DELETE FROM oauth_states WHERE state = $1 RETURNING expires_at', [
        state,
      ]);
      const row = r.rows[0];
      return row !== undefined && now <= row.expires_at;
    },
    async prune(before) {
      return (await q('DELETE FROM oauth_states WHERE expires_at < $1', [before])).rowCount ?? 0;
    },
  };
}
