import { accessSync, constants, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { failure, type StoreFailure, type StoreHealth, StoreUnavailableError } from '../health.js';

// SQLite's storage health, the file check: the periodic check makes sure the file is still the one
// opened and commits a real write; every store call's storage errors mark the store unhealthy at
// once (the monitor's guard, health.ts).

/**
 * The failure an error means for the database as a whole, or undefined for errors about the data
 * (a constraint, bad SQL), which leave the store healthy.
 */
export function classifyStoreError(err: unknown): StoreFailure | undefined {
  if (err instanceof StoreUnavailableError) return { ok: false, kind: err.kind, reason: err.message };
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') {
    // better-sqlite3 throws a TypeError when the connection has been closed.
    return /database connection is not open/i.test(message) ? failure('closed', message) : undefined;
  }
  // Extended codes (SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_WRITE, ...) count as their primary code.
  switch (code.split('_').slice(0, 2).join('_')) {
    case 'SQLITE_READONLY':
    case 'SQLITE_PERM':
    case 'SQLITE_CANTOPEN': // mostly permissions: the folder refuses the -wal/-shm files
      return failure('readonly', message);
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      return failure('locked', message);
    case 'SQLITE_FULL':
      return failure('full', message);
    case 'SQLITE_IOERR':
      return failure('io', message);
    case 'SQLITE_CORRUPT':
    case 'SQLITE_NOTADB':
      return failure('corrupt', message);
    default:
      return undefined;
  }
}

export interface SqliteCheckOptions {
  db: Database.Database;
  /** ':memory:' skips the file checks. */
  path: string;
  now?: () => number;
}

/**
 * SQLite's check for the store's health monitor: makes sure the file is still the one opened and
 * writable, then commits a real write. Synchronous, as better-sqlite3 is: open records its answer
 * before returning.
 */
export function sqliteCheck(opts: SqliteCheckOptions): () => StoreHealth {
  const { db, path } = opts;
  const now = opts.now ?? Date.now;
  const onDisk = path !== ':memory:' && path !== '';
  // The file as opened: if the path later names another file (or none), writes go nowhere useful.
  const opened = onDisk ? statSync(path) : undefined;
  const write = db.prepare(
    'INSERT INTO store_health (id, probed_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET probed_at = excluded.probed_at',
  );

  const checkFile = (): StoreHealth | undefined => {
    if (!opened) return undefined;
    let st;
    try {
      st = statSync(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return failure('missing', code === 'ENOENT' ? `${path} was deleted` : `${path}: ${code ?? String(err)}`);
    }
    if (st.ino !== opened.ino || st.dev !== opened.dev) {
      return failure('missing', `${path} was replaced by another file since it was opened`);
    }
    // The open file descriptor may still write, but the next start (and SQLite's -wal/-shm files
    // in the folder) would not: report it now rather than at the next restart.
    // The -wal and -shm files count too: a read-only open leaves them behind read-only, and then a
    // writable database file alone still cannot be written.
    for (const [target, what] of [
      [path, 'file'],
      [`${path}-wal`, 'file'],
      [`${path}-shm`, 'file'],
      [dirname(path), 'folder'],
    ] as const) {
      try {
        accessSync(target, constants.W_OK);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT' && target !== path) continue;
        return failure('readonly', `the ${what} ${target} is read-only for this user`);
      }
    }
    return undefined;
  };

  return (): StoreHealth => {
    if (!db.open) return failure('closed', 'the database has been closed');
    const bad = checkFile();
    if (bad) return bad;
    try {
      write.run(now());
      return { ok: true };
    } catch (err) {
      return classifyStoreError(err) ?? failure('io', err instanceof Error ? err.message : String(err));
    }
  };
}
