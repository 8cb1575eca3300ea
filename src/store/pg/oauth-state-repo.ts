import type { OAuthStateStore, PendingLimit } from '../ports.js';
import type { Query, Transact } from './query.js';

// Slack OAuth install links' states on PostgreSQL (migrations postgres/0004, 0005, 0008), as
// sqlite/oauth-state-repo.ts keeps them. Consuming is one DELETE: of two replicas handed the
// same redirect, the second waits for the first's row lock, then finds the row gone, so exactly
// one succeeds. Issuing with a limit counts, makes room and inserts in one transaction under an
// advisory lock (one per schema): a count in one statement does not see a concurrent insert
// (READ COMMITTED), so two replicas could each see 4 of 5 and both insert. Install links are
// rare; serialising them costs nothing anyone notices.

/** A state's network: as issued, else its client, else '' (states issued without an address). */
const NETWORK = `COALESCE(network, client, '')`;

/** Room for one more within `total`, made as PendingLimit.total says; false: refuse. */
async function makeRoom(q: Query, network: string, total: number): Promise<boolean> {
  const count = async () => Number((await q<{ n: string }>('SELECT COUNT(*) AS n FROM oauth_states')).rows[0]?.n ?? 0);
  if ((await count()) < total) return true;
  // The network holding the most; among equals, the one whose oldest state is oldest.
  const top = (
    await q<{ network: string; n: string }>(
      `SELECT ${NETWORK} AS network, COUNT(*) AS n FROM oauth_states
       GROUP BY 1 ORDER BY COUNT(*) DESC, MIN(expires_at) ASC, MIN(state) ASC LIMIT 1`,
    )
  ).rows[0];
  if (top === undefined || Number(top.n) < 2) return false;
  const mine = await q<{ n: string }>(`SELECT COUNT(*) AS n FROM oauth_states WHERE ${NETWORK} = $1`, [network]);
  if (Number(mine.rows[0]?.n ?? 0) >= Number(top.n)) return false;
  // Within it, the oldest state of the client holding the most.
  await q(
    `DELETE FROM oauth_states WHERE state = (
       SELECT state FROM oauth_states WHERE ${NETWORK} = $1 AND COALESCE(client, '') = (
         SELECT COALESCE(client, '') FROM oauth_states WHERE ${NETWORK} = $1
         GROUP BY 1 ORDER BY COUNT(*) DESC, MIN(expires_at) ASC, MIN(state) ASC LIMIT 1)
       ORDER BY expires_at ASC, state ASC LIMIT 1)`,
    [top.network],
  );
  return (await count()) < total;
}

async function issueWithin(q: Query, state: string, expiresAt: number, limit: PendingLimit): Promise<boolean> {
  await q(`SELECT pg_advisory_xact_lock(hashtext('assistant-bridge oauth_states ' || current_schema()))`);
  const held = await q<{ n: string }>('SELECT COUNT(*) AS n FROM oauth_states WHERE client = $1 AND expires_at >= $2', [
    limit.client,
    limit.now,
  ]);
  if (Number(held.rows[0]?.n ?? 0) >= limit.max) return false;
  const network = limit.network ?? limit.client;
  if (limit.total !== undefined && !(await makeRoom(q, network, Math.max(1, limit.total)))) return false;
  await q('INSERT INTO oauth_states (state, expires_at, client, network) VALUES ($1, $2, $3, $4)', [
    state,
    expiresAt,
    limit.client,
    network,
  ]);
  return true;
}

export function pgOAuthStates(q: Query, transact: Transact): OAuthStateStore {
  return {
    async issue(state, expiresAt, limit) {
      // A duplicate state is an error, not a race to settle: states are 24 random bytes.
      if (limit === undefined) {
        await q('INSERT INTO oauth_states (state, expires_at) VALUES ($1, $2)', [state, expiresAt]);
        return true;
      }
      return transact((tq) => issueWithin(tq, state, expiresAt, limit));
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
