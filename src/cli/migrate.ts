import { scrubbingWriter } from '../scrub.js';
import { parseArgs } from 'node:util';
import { ConfigError, type Env, parseRawEnv, readEnv } from '../config/config.js';
import { MigrationError, migrate, openDatabase } from '../store/sqlite/index.js';

export interface MigrateIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  /** The environment; `.env` in the working directory fills in what it lacks. Default process.env. */
  env?: Env;
}

const USAGE = `usage: assistant-bridge migrate

Applies the SQL migrations to DATABASE_PATH (SQLite), or to DATABASE_URL (PostgreSQL) when it is
set, and exits. Safe to run while the bridge runs. Exit status: 0 done, 1 failed, 2 bad usage.
`;

/**
 * `assistant-bridge migrate`: apply migrations/ to DATABASE_PATH and exit; with DATABASE_URL,
 * migrations/postgres/ to that PostgreSQL database instead.
 */
export async function run(
  args: string[],
  io: MigrateIo = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  // Driver errors may quote the connection string: never a configured secret.
  io = { ...io, stderr: scrubbingWriter(io.stderr) };
  // Parsed before anything is opened: `migrate --help` or a typo applies nothing.
  try {
    const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' } }, strict: true });
    if (values.help === true) {
      io.stdout.write(USAGE);
      return 0;
    }
  } catch (err) {
    io.stderr.write(`migrate: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  let path = 'the database';
  try {
    const raw = parseRawEnv(readEnv(io.env ?? process.env));
    if (raw.DATABASE_URL !== undefined) return await migratePostgres(raw.DATABASE_URL, io);
    path = raw.DATABASE_PATH;
    // The bare database, not openStore: the repositories prepare statements on tables that a
    // fresh database does not have until the migrations below have run.
    const db = openDatabase(raw.DATABASE_PATH);
    try {
      const applied = migrate(db);
      io.stdout.write(
        applied.length === 0
          ? `database ${raw.DATABASE_PATH} is up to date\n`
          : `applied ${applied.length} migration(s) to ${raw.DATABASE_PATH}: ${applied.join(', ')}\n`,
      );
    } finally {
      db.close();
    }
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr.write(`${err.message}\n`);
      return 2;
    }
    if (err instanceof MigrationError) {
      io.stderr.write(`migration failed: ${err.message}\n`);
      return 1;
    }
    // A file SQLite cannot open or write (permissions, not a database): one line, no stack.
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && /^(SQLITE_|E[A-Z]+$)/.test(code)) {
      io.stderr.write(`cannot migrate ${path}: ${code}: ${(err as Error).message}\n`);
      return 1;
    }
    throw err;
  }
}

async function migratePostgres(url: string, io: MigrateIo): Promise<number> {
  // Loaded only here: the SQLite path needs no PostgreSQL driver.
  const { classifyPgError, createPgPool, describePgUrl, migratePg } = await import('../store/pg/index.js');
  const where = describePgUrl(url);
  const pool = createPgPool(url);
  try {
    // Under the same advisory lock replicas take at start: safe while they run or start.
    const applied = await migratePg(pool);
    io.stdout.write(
      applied.length === 0
        ? `database ${where} is up to date\n`
        : `applied ${applied.length} migration(s) to ${where}: ${applied.join(', ')}\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof MigrationError) {
      io.stderr.write(`migration failed: ${err.message}\n`);
      return 1;
    }
    const bad = classifyPgError(err);
    const message = err instanceof Error ? err.message : String(err);
    io.stderr.write(`cannot migrate ${where}: ${bad?.reason ?? message}\n`);
    return 1;
  } finally {
    await pool.end().catch(() => undefined);
  }
}
