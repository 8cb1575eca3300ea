import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Logger } from '../../logger.js';
import { createConversationRepo } from './conversation-repo.js';
import { createEventRepo } from './event-repo.js';
import { createFeedbackRepo } from './feedback-repo.js';
import { createHealthMonitor, type HealthMonitor, type StoreHealth, type Timers } from '../health.js';
import { classifyStoreError, guardRepo, sqliteProbe } from './health.js';
import { createInFlightRepo, type InFlightRepo } from './inflight-repo.js';
import { createInstallationRepo, type InstallationRepo } from './installation-repo.js';
import { loadMigrations, MigrationError } from '../migrate.js';
import { currentVersion, migrate } from './migrate.js';

export { MigrationError, loadMigrations } from '../migrate.js';
export { migrate, currentVersion } from './migrate.js';
export { classifyStoreError } from './health.js';
export {
  STORE_UNAVAILABLE,
  type StoreFailureKind,
  type StoreHealth,
  StoreUnavailableError,
  type Timers,
} from '../health.js';
export type { InstallationRepo, InstallationKey } from './installation-repo.js';

export interface Store {
  readonly db: Database.Database;
  readonly path: string;
  /** The store's one health monitor (async.ts reports to it too). */
  readonly monitor: HealthMonitor;
  conversations: ReturnType<typeof createConversationRepo>;
  events: ReturnType<typeof createEventRepo>;
  inflight: InFlightRepo;
  feedback: ReturnType<typeof createFeedbackRepo>;
  installations: InstallationRepo;
  isOpen(): boolean;
  /** Whether the database can take writes now, and if not why (what /readyz shows). */
  health(): StoreHealth;
  /** Checks the file and commits a real write now (the periodic probe does this on its own). */
  probe(): StoreHealth;
  /** Called on every change of health; returns the unsubscribe function. */
  onHealthChange(listener: (health: StoreHealth) => void): () => void;
  close(): void;
}

export interface OpenDatabaseOptions {
  /**
   * busy_timeout: how long a statement waits for another connection's lock, blocking the event
   * loop all the while. Default 100 ms; keep it at most 200.
   */
  busyTimeoutMs?: number;
}

export interface OpenStoreOptions extends OpenDatabaseOptions {
  logger?: Logger;
  /** Apply pending migrations on open (default true). `migrate` and `start` both do. */
  migrate?: boolean;
  migrationsDir?: string;
  /** Between storage health probes. 0: no periodic probe. Default 5000. */
  probeIntervalMs?: number;
  /** First re-probe after a failure, doubling up to probeIntervalMs. Default 250. */
  probeRetryMs?: number;
  timers?: Timers;
}

/** During open and migration nothing is served yet: waiting for a lock is harmless there. */
const OPEN_BUSY_TIMEOUT_MS = 5000;
export const DEFAULT_BUSY_TIMEOUT_MS = 100;

/**
 * Opens (creating the folder and file) the SQLite database in WAL mode, with no repository: what
 * `migrate` needs, since the repositories' statements need the tables migrations create.
 */
export function openDatabase(path: string, opts: OpenDatabaseOptions = {}): Database.Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  try {
    db.pragma(`busy_timeout = ${OPEN_BUSY_TIMEOUT_MS}`);
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    setBusyTimeout(db, opts.busyTimeoutMs);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

function setBusyTimeout(db: Database.Database, ms = DEFAULT_BUSY_TIMEOUT_MS): void {
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(ms))}`);
}

/** Opens the database, migrates it, and starts the storage health probe. */
export function openStore(path: string, opts: OpenStoreOptions = {}): Store {
  const db = openDatabase(path, { busyTimeoutMs: OPEN_BUSY_TIMEOUT_MS });
  const log = opts.logger;
  let store: Store;
  try {
    const migrations = loadMigrations(opts.migrationsDir);
    if (opts.migrate !== false) {
      const applied = migrate(db, migrations);
      if (applied.length > 0) log?.info({ applied }, 'database migrated');
    } else {
      const have = currentVersion(db);
      const need = migrations.at(-1)?.version ?? 0;
      if (have < need) {
        throw new MigrationError(
          `the database is at schema version ${have}, this release needs ${need}: run assistant-bridge migrate`,
        );
      }
    }
    setBusyTimeout(db, opts.busyTimeoutMs);

    const check = sqliteProbe({ db, path });
    const monitor = createHealthMonitor({
      probe: async () => check(),
      classify: classifyStoreError,
      ...(opts.probeIntervalMs !== undefined ? { intervalMs: opts.probeIntervalMs } : {}),
      ...(opts.probeRetryMs !== undefined ? { retryMs: opts.probeRetryMs } : {}),
      ...(opts.timers ? { timers: opts.timers } : {}),
    });
    monitor.onChange((h) => {
      if (h.ok) log?.info('database writable again');
      else if (h.kind !== 'closed') log?.error({ reason: h.reason }, 'database unavailable');
    });
    store = {
      db,
      path,
      monitor,
      conversations: guardRepo(createConversationRepo(db), monitor, ['put', 'touch', 'delete']),
      events: guardRepo(createEventRepo(db), monitor, ['markSeen', 'prune']),
      inflight: guardRepo(createInFlightRepo(db), monitor, ['begin', 'progress', 'setUpstreamId', 'finish', 'prune']),
      feedback: guardRepo(createFeedbackRepo(db), monitor, ['rememberReply', 'vote', 'delivered', 'prune']),
      installations: guardRepo(createInstallationRepo(db), monitor, ['save', 'delete']),
      isOpen: () => db.open,
      health: () => monitor.health(),
      probe: () => monitor.record(check()),
      onHealthChange: (listener) => monitor.onChange(listener),
      close: () => {
        monitor.stop();
        if (db.open) db.close();
      },
    };
    monitor.record(check());
    monitor.start();
  } catch (err) {
    db.close();
    throw err;
  }
  return store;
}
