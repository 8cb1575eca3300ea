import { join } from 'node:path';
import type pg from 'pg';
import { defaultMigrationsDir, loadMigrations, type Migration, MigrationError } from '../migrate.js';

// PostgreSQL's migrations: `migrations/postgres/NNNN_name.sql` (SQLite's loader reads only the
// files of migrations/ itself, never this folder). Replicas starting together each call
// migratePg; a session advisory lock lets one apply the pending files while the others wait,
// then find nothing left to do. Each file runs in its own transaction with its version recorded
// in schema_migrations; a database newer than the newest file is refused, as with SQLite.

export function defaultPgMigrationsDir(): string {
  return join(defaultMigrationsDir(), 'postgres');
}

export function loadPgMigrations(dir = defaultPgMigrationsDir()): Migration[] {
  return loadMigrations(dir);
}

/** Waiting for another replica's migration may take this long (the pool's statement timeout is short). */
const LOCK_WAIT_MS = 120_000;
/** Advisory locks are per database: the key names the schema so two deployments do not wait on each other. */
const lockName = (schema: string | undefined) => `assistant-bridge migrate ${schema ?? ''}`;

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`;

/** The newest version recorded; 0 for a database never migrated. Creates nothing. */
export async function pgSchemaVersion(db: pg.Pool | pg.PoolClient): Promise<number> {
  const exists = await db.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  if (!exists.rows[0]?.t) return 0;
  const res = await db.query<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations');
  return res.rows[0]?.v ?? 0;
}

export interface PgMigrateOptions {
  migrations?: Migration[];
  /** The schema the pool's search_path names first, created when missing. */
  schema?: string;
  now?: () => number;
}

/** Applies pending migrations; returns the names applied. Throws MigrationError (or a connection error). */
export async function migratePg(pool: pg.Pool, opts: PgMigrateOptions = {}): Promise<string[]> {
  const migrations = opts.migrations ?? loadPgMigrations();
  const now = opts.now ?? Date.now;
  const newest = migrations.at(-1)?.version ?? 0;
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("SELECT set_config('statement_timeout', $1, false)", [String(LOCK_WAIT_MS)]);
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [lockName(opts.schema)]);
    try {
      if (opts.schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(opts.schema)}`);
      await client.query(CREATE_TABLE);
      const have = await pgSchemaVersion(client);
      if (have > newest) {
        throw new MigrationError(
          `the database is at schema version ${have}, newer than this release knows (${newest}); use a newer assistant-bridge or another DATABASE_URL`,
        );
      }
      const applied: string[] = [];
      for (const m of migrations) {
        if (m.version <= have) continue;
        try {
          await client.query('BEGIN');
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
            m.version,
            m.name,
            now(),
          ]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw new MigrationError(`migration postgres/${m.name} failed: ${(err as Error).message}`);
        }
        applied.push(m.name);
      }
      return applied;
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [lockName(opts.schema)]);
      await client.query('RESET statement_timeout');
    }
  } catch (err) {
    // A connection that failed mid-way is not given back to the pool (it may hold the lock).
    if (!(err instanceof MigrationError)) broken = err as Error;
    throw err;
  } finally {
    client.release(broken);
  }
}

/** Checks that the database is at exactly this release's schema version (no migration here). */
export async function checkPgSchema(pool: pg.Pool, migrations = loadPgMigrations()): Promise<number> {
  const have = await pgSchemaVersion(pool);
  const need = migrations.at(-1)?.version ?? 0;
  if (have < need) {
    throw new MigrationError(
      `the database is at schema version ${have}, this release needs ${need}: run assistant-bridge migrate`,
    );
  }
  if (have > need) {
    throw new MigrationError(
      `the database is at schema version ${have}, newer than this release knows (${need}); use a newer assistant-bridge or another DATABASE_URL`,
    );
  }
  return have;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A schema name as an SQL identifier; only plain names are accepted (they cannot be parameters). */
export function quoteIdent(name: string): string {
  if (!IDENT.test(name)) throw new Error(`not a plain schema name: ${JSON.stringify(name)}`);
  return `"${name}"`;
}
