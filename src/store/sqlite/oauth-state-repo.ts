import type Database from 'better-sqlite3';
import type { PendingLimit } from '../ports.js';

// Slack OAuth install links' states (migrations 0007, 0008, 0011), on SQLite: single use through
// one DELETE, so two connections consuming one state cannot both succeed.

export interface OAuthStateRepo {
  /** Stores the state within `limit` (PendingLimit: per client, and in all), else false. */
  issue(state: string, expiresAt: number, limit?: PendingLimit): boolean;
  /** true once for a state issued and not expired at `now`; the state is gone afterwards either way. */
  consume(state: string, now: number): boolean;
  prune(before: number): number;
}

/** A state's network: as issued, else its client, else '' (states issued without an address). */
const NETWORK = `COALESCE(network, client, '')`;

export function createOAuthStateRepo(db: Database.Database): OAuthStateRepo {
  // A duplicate state is an error, not a race to settle: states are 24 random bytes.
  const issue = db.prepare('INSERT INTO oauth_states (state, expires_at, client, network) VALUES (?, ?, ?, ?)');
  const pending = db.prepare<[string, number], { n: number }>(
    'SELECT COUNT(*) AS n FROM oauth_states WHERE client = ? AND expires_at >= ?',
  );
  const all = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM oauth_states');
  const held = db.prepare<[string], { n: number }>(`SELECT COUNT(*) AS n FROM oauth_states WHERE ${NETWORK} = ?`);
  // The network holding the most; among equals, the one whose oldest state is oldest.
  const biggest = db.prepare<[], { network: string; n: number }>(
    `SELECT ${NETWORK} AS network, COUNT(*) AS n FROM oauth_states
     GROUP BY 1 ORDER BY n DESC, MIN(expires_at) ASC, MIN(rowid) ASC LIMIT 1`,
  );
  // Within that network, the oldest state of the client holding the most.
  const takeFrom = db.prepare<[string, string]>(
    `DELETE FROM oauth_states WHERE rowid = (
       SELECT rowid FROM oauth_states WHERE ${NETWORK} = ? AND COALESCE(client, '') = (
         SELECT COALESCE(client, '') FROM oauth_states WHERE ${NETWORK} = ?
         GROUP BY 1 ORDER BY COUNT(*) DESC, MIN(expires_at) ASC, MIN(rowid) ASC LIMIT 1)
       ORDER BY expires_at ASC, rowid ASC LIMIT 1)`,
  );
  /** Room for one more within `total`: made as PendingLimit.total says, or false. */
  const makeRoom = (network: string, total: number): boolean => {
    if ((all.get()?.n ?? 0) < total) return true;
    const top = biggest.get();
    if (top === undefined || top.n < 2 || (held.get(network)?.n ?? 0) >= top.n) return false;
    takeFrom.run(top.network, top.network);
    return (all.get()?.n ?? 0) < total;
  };
  // Count and insert in one transaction: SQLite writers are serialised, so the bounds hold.
  const issueWithin = db.transaction((state: string, expiresAt: number, limit: PendingLimit): boolean => {
    if ((pending.get(limit.client, limit.now)?.n ?? 0) >= limit.max) return false;
    const network = limit.network ?? limit.client;
    if (limit.total !== undefined && !makeRoom(network, Math.max(1, limit.total))) return false;
    issue.run(state, expiresAt, limit.client, network);
    return true;
  });
  const take = db.prepare<[string], { expires_at: number }>(
    'DELETE FROM oauth_states WHERE state = ? RETURNING expires_at',
  );
  const prune = db.prepare('DELETE FROM oauth_states WHERE expires_at < ?');
  return {
    issue(state, expiresAt, limit) {
      if (limit !== undefined) return issueWithin(state, expiresAt, limit);
      issue.run(state, expiresAt, null, null);
      return true;
    },
    consume(state, now) {
      const row = take.get(state);
      return row !== undefined && now <= row.expires_at;
    },
    prune(before) {
      return prune.run(before).changes;
    },
  };
}
