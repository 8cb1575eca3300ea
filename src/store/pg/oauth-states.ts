import type { AsyncOAuthStateStore } from '../async-port.js';
import type { Query } from './coordination.js';

// Slack OAuth install links' states on PostgreSQL (migration postgres/0003). Consuming is one
// DELETE: of two replicas handed the same redirect, the second waits for the first's row lock,
// then finds the row gone, so exactly one succeeds.

export function pgOAuthStates(q: Query): AsyncOAuthStateStore {
  return {
    async issue(state, expiresAt) {
      // A duplicate state is an error, not a race to settle: states are 24 random bytes.
      await q('INSERT INTO oauth_states (state, expires_at) VALUES ($1, $2)', [state, expiresAt]);
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
