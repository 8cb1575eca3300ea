import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { Config } from '../config/config.js';
import type { Pool } from 'pg';
import {
  classifyStoreError,
  MigrationError,
  openStore,
  type StoreFailureKind,
  type StoreHealth,
} from '../store/sqlite/index.js';
import { type CheckRow, fail, ok } from './types.js';

// DATABASE_PATH: doctor creates nothing. A file that exists is opened in WAL mode and migrated to
// this release's schema (what `start` would do anyway) and written: the store's own health check,
// a real committed write, says why not (read-only, missing, locked, full). A file that does not
// exist yet is only looked at: its nearest existing folder must be a folder this user can write,
// where start will create it (and any missing folders) - a mistyped path shows as such.

/** Doctor can afford to wait for a lock a running bridge holds for a moment; the bridge cannot. */
const DOCTOR_BUSY_TIMEOUT_MS = 2000;

export async function checkDatabase(config: Config): Promise<CheckRow> {
  if (config.postgres) return checkPostgres(config.postgres.url, { leaseMs: config.replica.leaseSeconds * 1000 });
  return checkDatabasePath(config.service.databasePath);
}

// DATABASE_URL: the server answers (`select 1`), the schema is this release's (doctor does not
// migrate a database other replicas share: that is `migrate`'s job, under its lock), and a real
// write commits. The URL is shown without its password.
export async function checkPostgres(
  url: string,
  opts: { timeoutMs?: number; leaseMs?: number } = {},
): Promise<CheckRow> {
  const leaseMs = opts.leaseMs ?? 15_000;
  const { checkPgSchema, classifyPgError, createPgPool, describePgUrl } = await import('../store/pg/index.js');
  const where = describePgUrl(url);
  const timeoutMs = opts.timeoutMs ?? 5000;
  const pool = createPgPool(url, { poolMax: 1, connectTimeoutMs: timeoutMs, statementTimeoutMs: timeoutMs });
  try {
    await pool.query('SELECT 1');
    const version = await checkPgSchema(pool);
    // The check's own table, under a replica id of its own: a real committed write, left behind as one row.
    await pool.query(
      `INSERT INTO store_health (replica_id, probed_at) VALUES ('doctor', $1)
       ON CONFLICT (replica_id) DO UPDATE SET probed_at = excluded.probed_at`,
      [Date.now()],
    );
    const server = await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v");
    const detail = `${where}: PostgreSQL ${server.rows[0]?.v ?? '?'}, writable, schema version ${version}`;
    return ok('database', `${detail}\n${await replicasLine(pool, leaseMs)}`);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof MigrationError) {
      return fail(
        'database',
        `${where}: ${message}`,
        /run assistant-bridge migrate/.test(message)
          ? 'run `assistant-bridge migrate` with this DATABASE_URL (replicas also migrate when they start)'
          : 'use the assistant-bridge release that wrote this database, or another DATABASE_URL',
      );
    }
    const bad = classifyPgError(err);
    return fail('database', `${where}: ${bad?.reason ?? message}`, PG_HINTS[bad?.kind ?? 'io']);
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/**
 * The replicas sharing the database as their heartbeats show them: live ones with the age of
 * their last beat, gone ones still holding open replies (a live replica repairs those).
 */
async function replicasLine(pool: Pool, leaseMs: number): Promise<string> {
  const now = Date.now();
  const rows = await pool.query<{ replica_id: string; heartbeat_at: number; open: number }>(
    `SELECT r.replica_id, r.heartbeat_at,
       (SELECT count(*)::int FROM replies_in_flight f WHERE f.owner = r.replica_id AND f.state = 'streaming') AS open
     FROM replicas r ORDER BY r.replica_id`,
  );
  const live = rows.rows.filter((r) => now - r.heartbeat_at <= leaseMs);
  const gone = rows.rows.filter((r) => now - r.heartbeat_at > leaseMs && r.open > 0);
  const ages = live.map((r) => `${r.replica_id} (${Math.round((now - r.heartbeat_at) / 1000)} s ago)`);
  const parts = [`replicas live: ${ages.length === 0 ? 'none' : ages.join(', ')}`];
  if (gone.length > 0)
    parts.push(`gone with open replies: ${gone.map((r) => `${r.replica_id} (${r.open})`).join(', ')}`);
  return parts.join('; ');
}

/** What to do about a PostgreSQL database `start` could not open: the doctor's hint for it. */
export async function pgOpenHint(err: unknown): Promise<string> {
  if (err instanceof MigrationError) {
    return /run assistant-bridge migrate/.test(err.message)
      ? 'run `assistant-bridge migrate` with this DATABASE_URL'
      : 'use the assistant-bridge release that wrote this database, or another DATABASE_URL';
  }
  const { classifyPgError } = await import('../store/pg/index.js');
  return PG_HINTS[classifyPgError(err)?.kind ?? 'io'];
}

const PG_HINTS: Record<StoreFailureKind, string> = {
  readonly: 'DATABASE_URL points at a read-only server (a standby?): use the primary',
  missing: 'the database (or schema) in DATABASE_URL does not exist: create it, or correct the URL',
  locked: 'the server did not answer in time (locks held, or overloaded): check its activity (pg_stat_activity)',
  full: 'the PostgreSQL server is out of disk space',
  io: 'check that the server in DATABASE_URL is up and reachable from here, and the user and password',
  corrupt: 'the server reports damaged data: see its logs',
  closed: 'the connection was closed while doctor used it: run doctor again',
};

/** A DATABASE_PATH that does not exist yet: can start create it? Nothing is created here. */
function checkCreatable(path: string): CheckRow {
  let folder = dirname(resolve(path));
  const missing: string[] = [];
  while (!existsSync(folder) && dirname(folder) !== folder) {
    missing.unshift(folder);
    folder = dirname(folder);
  }
  if (!statSync(folder).isDirectory()) {
    return fail('database', `${path}: ENOTDIR: ${folder} is a file, not a folder`, CREATE_HINT);
  }
  try {
    accessSync(folder, constants.W_OK | constants.X_OK);
  } catch {
    return fail('database', `${path}: not writable: cannot create files in ${folder}`, HINTS.readonly);
  }
  const also = missing.length === 0 ? '' : ` with the missing folder ${missing[missing.length - 1] ?? ''}`;
  return ok('database', `${path}: does not exist yet; start will create it${also} (${folder} is writable)`);
}

export async function checkDatabasePath(path: string, opts: { busyTimeoutMs?: number } = {}): Promise<CheckRow> {
  if (path !== ':memory:' && !existsSync(path)) return checkCreatable(path);
  let store: ReturnType<typeof openStore> | undefined;
  try {
    store = openStore(path, { checkIntervalMs: 0, busyTimeoutMs: opts.busyTimeoutMs ?? DOCTOR_BUSY_TIMEOUT_MS });
    const { db } = store;
    const health = await store.check();
    if (!health.ok) return failed(path, health);
    const mode = String(db.pragma('journal_mode', { simple: true }));
    return ok('database', `${path}: writable, ${mode.toUpperCase()}, schema version ${await store.schemaVersion()}`);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof MigrationError) {
      return fail('database', `${path}: ${message}`, 'restore a backup or point DATABASE_PATH at another file');
    }
    const storage = classifyStoreError(err);
    if (storage) return failed(path, storage);
    const code = (err as { code?: string }).code;
    return fail('database', `${path}: ${code ? `${code}: ` : ''}${message}`, CREATE_HINT);
  } finally {
    await store?.close();
  }
}

function failed(path: string, health: StoreHealth): CheckRow {
  const kind = health.kind ?? 'io';
  return fail('database', `${path}: ${health.reason ?? kind}`, HINTS[kind]);
}

/** "this user (ann, uid 1000)": who must be able to write, named. */
function thisUser(): string {
  const uid = process.getuid?.();
  let name: string | undefined;
  try {
    name = userInfo().username;
  } catch {
    // a uid with no passwd entry (a container's --user 1234): the number alone
  }
  const parts = [name, uid === undefined ? undefined : `uid ${uid}`].filter((p) => p !== undefined);
  return parts.length === 0 ? 'this user' : `this user (${parts.join(', ')})`;
}

const CREATE_HINT = `DATABASE_PATH must be a file in a folder ${thisUser()} can create and write (a volume in Docker)`;

/**
 * What to do about a SQLite database `start` could not open: the doctor's hint for the same
 * failure, so both say the same thing.
 */
export function sqliteOpenHint(err: unknown): string {
  if (err instanceof MigrationError) return 'restore a backup or point DATABASE_PATH at another file';
  const kind = classifyStoreError(err)?.kind;
  return kind !== undefined ? HINTS[kind] : CREATE_HINT;
}

const HINTS: Record<StoreFailureKind, string> = {
  readonly:
    `DATABASE_PATH, its folder and its -wal/-shm files must be writable by ${thisUser()}` +
    `; in Docker mount the volume read-write and chown it`,
  missing: 'the file was deleted or replaced while doctor used it: is something else removing DATABASE_PATH?',
  locked:
    'another process holds a write lock on the database (a second bridge on the same file, a sqlite3 shell ' +
    'inside a transaction): stop it, or give each bridge its own DATABASE_PATH',
  full: 'the disk holding DATABASE_PATH is full: free space, or move the database to a larger volume',
  io: 'the disk or volume under DATABASE_PATH reports errors: check it, and restore a backup if the file is damaged',
  corrupt: 'the file is damaged or not a SQLite database: restore a backup or point DATABASE_PATH at another file',
  closed: 'the database was closed while doctor used it: run doctor again',
};
