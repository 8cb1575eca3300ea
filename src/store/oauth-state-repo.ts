import type Database from 'better-sqlite3';

// Slack OAuth install links' states (migration 0006), on SQLite: single use through one DELETE,
// so two connections consuming one state cannot both succeed.

export interface OAuthStateRepo {
  issue(state: string, expiresAt: number): void;
  /** true once for a state issued and not expired at `now`; the state is gone afterwards either way. */
  consume(state: string, now: number): boolean;
  prune(before: number): number;
}

export function createOAuthStateRepo(db: Database.Database): OAuthStateRepo {
  // A duplicate state is an error, not a race to settle: states are 24 random bytes.
  const issue = db.prepare('INSERT INTO oauth_states (state, expires_at) VALUES (?, ?)');
  const take = db.prepare<[string], { expires_at: number }>(
    'DELETE FROM oauth_states WHERE state = ? RETURNING expires_at',
  );
  const prune = db.prepare('DELETE FROM oauth_states WHERE expires_at < ?');
  return {
    issue(state, expiresAt) {
      issue.run(state, expiresAt);
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
