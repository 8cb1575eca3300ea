import type Database from 'better-sqlite3';
import { BUDGET_KEEP_MS, HANDOVER_KEEP_MS, type AsyncStore } from '../ports.js';
import { guardEach, type HealthMonitor, type StoreHealth } from '../health.js';
import { sqliteBudgetRows } from './budget-repo.js';
import { createConversationRepo } from './conversation-repo.js';
import { createEventRepo } from './event-repo.js';
import { createInstallationRepo } from './installation-repo.js';
import { currentVersion } from './migrate.js';
import { createOAuthStateRepo } from './oauth-state-repo.js';
import { createPlaygroundOwnerRepo } from './playground-owner-repo.js';
import { createPlaygroundTurnRepo } from './playground-turn-repo.js';
import { createReplicaRepo } from './replica-repo.js';
import { createTranscriptRepo } from './transcript-repo.js';
import { createFeedbackRepo, createInFlightRepo } from './reply-repo.js';

// The store port over the better-sqlite3 database: the repositories (a file per table, as
// PostgreSQL's), each call guarded once by the store's health monitor (health.ts guardEach), which
// makes its answer a promise. Composed once at open: one message's calls go from the guard
// straight to the repository.

/**
 * The store on SQLite: the asynchronous port the bridge uses, plus the database itself for what
 * only SQLite has (doctor's pragmas, tests that read the tables).
 */
export interface SqliteStore extends AsyncStore {
  readonly backend: 'sqlite';
  readonly db: Database.Database;
}

export interface SqliteStoreParts {
  db: Database.Database;
  path: string;
  /** The store's one health monitor: the check and every call below report to it. */
  monitor: HealthMonitor;
  /** SQLite's check (check.ts sqliteCheck): synchronous, as better-sqlite3 is. */
  checkNow: () => StoreHealth;
}

/** The store port over an open, migrated database (index.ts openStore opens it). */
export function createSqliteStore(parts: SqliteStoreParts): SqliteStore {
  const { db, path, monitor, checkNow } = parts;
  const { replicas, leases } = createReplicaRepo(db);
  const pruneHandovers = db.prepare('DELETE FROM place_handover WHERE released_at < ?');
  const pruneBudgets = db.prepare('DELETE FROM learned_budgets WHERE updated_at < ?');
  const { prune: prunePlaygroundOwners, ...playgroundOwners } = createPlaygroundOwnerRepo(db);

  return {
    backend: 'sqlite',
    location: path,
    db,
    // The names in each list are writes: they fail at once while the store is unhealthy.
    conversations: guardEach(monitor, createConversationRepo(db), ['put', 'touch', 'delete', 'prune']),
    events: guardEach(monitor, createEventRepo(db), ['recordDelivery', 'prune']),
    transcripts: guardEach(monitor, createTranscriptRepo(db), ['append']),
    inflight: guardEach(monitor, createInFlightRepo(db), ['begin', 'progress', 'setUpstreamId', 'finish', 'prune']),
    installations: guardEach(monitor, createInstallationRepo(db), ['save', 'delete']),
    replicas: guardEach(monitor, replicas, []),
    leases: guardEach(monitor, leases, []),
    feedback: guardEach(monitor, createFeedbackRepo(db), ['rememberReply', 'vote', 'delivered', 'prune', 'pruneVotes']),
    oauthStates: guardEach(monitor, createOAuthStateRepo(db), []),
    playgroundOwners: guardEach(monitor, playgroundOwners, ['claim']),
    playgroundTurns: guardEach(monitor, createPlaygroundTurnRepo(db), ['save']),
    // The scheduler's own repository: one table layout, one mapping.
    budgets: guardEach(monitor, sqliteBudgetRows(db), []),
    housekeeping: monitor.guard(
      (now: number) => ({
        handovers: pruneHandovers.run(now - HANDOVER_KEEP_MS).changes,
        budgets: pruneBudgets.run(now - BUDGET_KEEP_MS).changes,
        playgroundOwners: prunePlaygroundOwners(now),
      }),
      true,
    ),
    schemaVersion: monitor.guard(() => currentVersion(db)),
    isOpen: () => db.open,
    health: () => monitor.health(),
    check: async () => monitor.record(checkNow()),
    onHealthChange: (listener) => monitor.onChange(listener),
    close: async () => {
      monitor.stop();
      if (db.open) db.close();
    },
  };
}
