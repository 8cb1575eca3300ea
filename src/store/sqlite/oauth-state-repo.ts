import type Database from 'better-sqlite3';
import type { PendingLimit } from '../ports.js';

// Slack OAuth install links' states (migration 0006), on SQLite: single use through one DELETE,
// so two connections consuming one state cannot both succeed.

export interface OAuthStateRepo {
  /** Stores the state unless `limit.client` already holds `limit.max` good ones (then false). */
  issue(state: string, expiresAt: number, limit?: PendingLimit): boolean;
  /** true once for a state issued and not expired at `now`; the state is gone afterwards either way. */
  consume(state: string, now: number): boolean;
  prune(before: number): number;
}

export function createOAuthStateRepo(db: Database.Database): OAuthStateRepo {
  // A duplicate state is an error, not a race to settle: states are 24 random bytes.
  const issue = db.prepare('INSERT INTO oauth_states (state, expires_at, client) VALUES (?, ?, ?)');
  const pending = db.prepare<[string, number], { n: number }>(
    'SELECT COUNT(*) AS n FROM oauth_states WHERE client = ? AND expires_at >= ?',
  );
  // Count and insert in one transaction: SQLite writers are serialised, so the bound holds.
  // Keeps the newest `total` (by expiry, then insertion): the oldest pending states go first.
  const keepNewest = db.prepare(
    `DELETE FROM oauth_states WHERE rowid IN
       (SELECT rowid FROM oauth_states ORDER BY expires_at DESC, rowid DESC LIMIT -1 OFFSET ?)`,
  );
  const issueWithin = db.transaction((state: string, expiresAt: number, limit: PendingLimit): boolean => {
    if ((pending.get(limit.client, limit.now)?.n ?? 0) >= limit.max) return false;
    issue.run(state, expiresAt, limit.client);
    if (limit.total !== undefined) keepNewest.run(Math.max(1, limit.total));
    return true;
  });
  const take = db.prepare<[string], { expires_at: number }>(
    'DELETE FROM oauth_states WHERE state = ? RETURNING expires_at',
  );
  const prune = db.prepare('DELETE FROM oauth_states WHERE expires_at < ?');
  return {
    issue(state, expiresAt, limit) {
      if (limit !== undefined) return issueWithin(state, expiresAt, limit);
      issue.run(state, expiresAt, null);
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
