import type { Config } from '../config/config.js';
import { currentVersion, MigrationError, openStore } from '../store/index.js';
import { type CheckRow, fail, ok } from './types.js';

// DATABASE_PATH: the folder can be created, the file opened in WAL mode, written to, and
// migrated to this release's schema (what `start` would do anyway, so doctor does it too).

export function checkDatabase(config: Config): CheckRow {
  const path = config.service.databasePath;
  let store: ReturnType<typeof openStore> | undefined;
  try {
    store = openStore(path);
    const { db } = store;
    // A write lock and a real write, rolled back: a read-only file or folder fails here.
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec('CREATE TABLE doctor_write_probe (x INTEGER)');
    } finally {
      db.exec('ROLLBACK');
    }
    const mode = String(db.pragma('journal_mode', { simple: true }));
    return ok('database', `${path}: writable, ${mode.toUpperCase()}, schema version ${currentVersion(db)}`);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof MigrationError) {
      return fail('database', `${path}: ${message}`, 'restore a backup or point DATABASE_PATH at another file');
    }
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
