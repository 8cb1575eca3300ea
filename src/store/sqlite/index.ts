import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { createHealthMonitor, type StoreCheckOptions } from '../health.js';
import { createSqliteStore, type SqliteStore } from './store.js';
import { classifyStoreError, sqliteCheck } from './check.js';
import { loadMigrations, MigrationError } from '../migrate.js';
import { currentVersion, migrate } from './migrate.js';

export { MigrationError, loadMigrations } from '../migrate.js';
export { migrate, currentVersion } from './migrate.js';
export { classifyStoreError } from './check.js';
export {
  STORE_UNAVAILABLE,
  type StoreFailureKind,
  type StoreHealth,
  StoreUnavailableError,
  type Timers,
} from '../health.js';
export type { InstallationKey } from '../ports.js';

export type { SqliteStore } from './store.js';

export interface OpenDatabaseOptions {
  /**
   * busy_timeout: how long a statement waits for another connection's lock, blocking the event
   * loop all the while. Default 100 ms; keep it at most 200.
   */
  busyTimeoutMs?: number;
}

export interface OpenStoreOptions extends OpenDatabaseOptions, StoreCheckOptions {
  /** How often a few free pages go back to the file (PRAGMA incremental_vacuum); default 2 s. */
  vacuumEveryMs?: number;
  /** Apply pending migrations on open (default true). `migrate` and `start` both do. */
  migrate?: boolean;
  migrationsDir?: string;
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
    // Before the first table of a new file, or it takes a VACUUM (openStore; migration 0010).
    // Only then: on an existing file the pragma writes, and the file may be read-only.
    if ((db.prepare('SELECT COUNT(*) AS n FROM sqlite_master').get() as { n: number }).n === 0)
      db.pragma('auto_vacuum = INCREMENTAL');
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

/**
 * Opens the database, migrates it, and starts the storage health check. Synchronous, as
 * better-sqlite3 is: the first check's answer is recorded before it returns.
 */
export function openStore(path: string, opts: OpenStoreOptions = {}): SqliteStore {
  const db = openDatabase(path, { busyTimeoutMs: OPEN_BUSY_TIMEOUT_MS });
  const log = opts.logger;
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
    convertToIncrementalVacuum(db, path, log);
    setBusyTimeout(db, opts.busyTimeoutMs);

    const checkNow = sqliteCheck({ db, path });
    const monitor = createHealthMonitor({
      check: async () => checkNow(),
      classify: classifyStoreError,
      logger: opts.logger,
      checkIntervalMs: opts.checkIntervalMs,
      checkRetryMs: opts.checkRetryMs,
      timers: opts.timers,
    });
    const store = createSqliteStore({ db, path, monitor, checkNow });
    monitor.record(checkNow());
    monitor.start();
    const endVacuum = startIncrementalVacuum(db, opts.vacuumEveryMs);
    const close = store.close;
    store.close = async () => {
      endVacuum();
      await close();
    };
    return store;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Free pages handed back to the file per step: 64 pages (256 KB at 4 KB) take a millisecond or two. */
const VACUUM_PAGES_PER_STEP = 64;

/**
 * A file made before auto_vacuum was set (migration 0010) is converted by one VACUUM, once, at
 * open, before anything is served: afterwards the timer below returns space in small steps.
 */
function convertToIncrementalVacuum(db: Database.Database, path: string, log: OpenStoreOptions['logger']): void {
  if (path === ':memory:' || db.pragma('auto_vacuum', { simple: true }) === 2) return;
  const started = Date.now();
  try {
    db.pragma('auto_vacuum = INCREMENTAL');
    db.exec('VACUUM');
    log?.info({ ms: Date.now() - started }, 'database converted to incremental vacuum (once)');
  } catch (err) {
    // Read-only, full, or busy: the bridge runs as before (its health says why); next open retries.
    log?.warn(
      { err: err instanceof Error ? err.message : String(err) },
      'could not convert the database to incremental vacuum',
    );
  }
}

/**
 * Space freed by pruning goes back to the file a few pages at a time, never in one long VACUUM
 * that would hold the event loop (better-sqlite3 is synchronous). Returns the stop function.
 */
function startIncrementalVacuum(db: Database.Database, everyMs = 2000): () => void {
  const timer = setInterval(() => {
    try {
      if (!db.open || db.inTransaction) return;
      if (Number(db.pragma('freelist_count', { simple: true })) > 0)
        db.pragma(`incremental_vacuum(${VACUUM_PAGES_PER_STEP})`);
    } catch {
      // Busy or read-only: the next step tries again; the health check reports real trouble.
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
