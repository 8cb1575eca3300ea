import type { Config } from '../config/config.js';
import {
  classifyStoreError,
  currentVersion,
  MigrationError,
  openStore,
  type StoreFailureKind,
  type StoreHealth,
} from '../store/index.js';
import { type CheckRow, fail, ok } from './types.js';

// DATABASE_PATH: the folder can be created, the file opened in WAL mode and migrated to this
// release's schema (what `start` would do anyway, so doctor does it too), and written: the store's
// own health probe, a real committed write, says why not (read-only, missing, locked, full).

/** Doctor can afford to wait for a lock a running bridge holds for a moment; the bridge cannot. */
const DOCTOR_BUSY_TIMEOUT_MS = 2000;

export function checkDatabase(config: Config): CheckRow {
  return checkDatabasePath(config.service.databasePath);
}

export function checkDatabasePath(path: string, opts: { busyTimeoutMs?: number } = {}): CheckRow {
  let store: ReturnType<typeof openStore> | undefined;
  try {
    store = openStore(path, { probeIntervalMs: 0, busyTimeoutMs: opts.busyTimeoutMs ?? DOCTOR_BUSY_TIMEOUT_MS });
    const { db } = store;
    const health = store.probe();
    if (!health.ok) return failed(path, health);
    const mode = String(db.pragma('journal_mode', { simple: true }));
    return ok('database', `${path}: writable, ${mode.toUpperCase()}, schema version ${currentVersion(db)}`);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof MigrationError) {
      return fail('database', `${path}: ${message}`, 'restore a backup or point DATABASE_PATH at another file');
    }
    const storage = classifyStoreError(err);
    if (storage) return failed(path, storage);
    const code = (err as { code?: string }).code;
    return fail(
      'database',
      `${path}: ${code ? `${code}: ` : ''}${message}`,
      'DATABASE_PATH must be a file in a folder this user can create and write (a volume in Docker)',
    );
  } finally {
    store?.close();
  }
}

function failed(path: string, health: StoreHealth): CheckRow {
  const kind = health.kind ?? 'io';
  return fail('database', `${path}: ${health.reason ?? kind}`, HINTS[kind]);
}

const uid = process.getuid?.();
const HINTS: Record<StoreFailureKind, string> = {
  readonly:
    `DATABASE_PATH, its folder and its -wal/-shm files must be writable by this user` +
    `${uid === undefined ? '' : ` (uid ${uid})`}; in Docker mount the volume read-write and chown it`,
  missing: 'the file was deleted or replaced while doctor used it: is something else removing DATABASE_PATH?',
  locked:
    'another process holds a write lock on the database (a second bridge on the same file, a sqlite3 shell ' +
    'inside a transaction): stop it, or give each bridge its own DATABASE_PATH',
  full: 'the disk holding DATABASE_PATH is full: free space, or move the database to a larger volume',
  io: 'the disk or volume under DATABASE_PATH reports errors: check it, and restore a backup if the file is damaged',
  corrupt: 'the file is damaged or not a SQLite database: restore a backup or point DATABASE_PATH at another file',
  closed: 'the database was closed while doctor used it: run doctor again',
};
