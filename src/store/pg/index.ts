import pg from 'pg';
import type { AsyncStore } from '../ports.js';
import { createHealthMonitor, type StoreCheckOptions } from '../health.js';
import type { Migration } from '../migrate.js';
import { classifyPgError, pgCheck } from './check.js';
import { checkPgSchema, loadPgMigrations, migratePg, quoteIdent } from './migrate.js';
import { pgSignals } from './signals.js';
import { createPgStoreOver } from './store.js';

export { classifyPgError } from './check.js';
export { pgFeedback } from './reply-repo.js';
export { checkPgSchema, defaultPgMigrationsDir, loadPgMigrations, migratePg, pgSchemaVersion } from './migrate.js';

// The async store port on PostgreSQL, for several replicas sharing one database. A small pool;
// every statement parameterised and bounded by a statement timeout, so a stuck database shows as
// a failed operation (and on /readyz) rather than as replies that hang. Races between replicas are
// settled by the database: ON CONFLICT for insert-if-absent and upserts, conditional UPDATEs for
// compare-and-set (under READ COMMITTED the second writer waits for the first's row lock, then
// re-checks the condition against the row the first committed).

export interface PgStoreOptions extends StoreCheckOptions {
  /** Connections in the pool. Default 4. */
  poolMax?: number;
  /** Per statement, enforced by the server. Default 5000. */
  statementTimeoutMs?: number;
  /** Connecting (TCP + authentication). Default 5000. */
  connectTimeoutMs?: number;
  /** Puts this schema first on the connections' search_path (created when migrating). Tests use one each. */
  schema?: string;
  /** Apply pending migrations on open (default true); false: refuse a schema that is not current. */
  migrate?: boolean;
  migrations?: Migration[];
  /** Names this replica's row in store_health. Default 'default'. */
  replicaId?: string;
}

/** The URL without its password (and query), for logs, errors and doctor. */
export function describePgUrl(url: string): string {
  try {
    const u = new URL(url);
    const user = u.username ? `${decodeURIComponent(u.username)}@` : '';
    return `${u.protocol}//${user}${u.host}${u.pathname}`;
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

const INT8_OID = 20;

/** A pool with this store's settings; BIGINT columns (epoch ms, ids) read back as numbers. */
export function createPgPool(url: string, opts: PgStoreOptions = {}): pg.Pool {
  const types = new pg.TypeOverrides();
  // Epoch milliseconds and row ids stay far below 2^53.
  types.setTypeParser(INT8_OID, (v: string) => Number(v));
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolMax ?? 4,
    idleTimeoutMillis: 10_000,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 5000,
    statement_timeout: opts.statementTimeoutMs ?? 5000,
    // Client side too: a server that stops answering altogether must not hang a caller.
    query_timeout: (opts.statementTimeoutMs ?? 5000) + 2000,
    idle_in_transaction_session_timeout: 10_000,
    application_name: 'assistant-bridge',
    types,
    ...(opts.schema !== undefined ? { options: `-c search_path=${quoteIdent(opts.schema)}` } : {}),
  });
  // An idle connection the server drops emits 'error' on the pool; unhandled, it would crash the
  // process. The next query gets a fresh connection, and the health check reports the outage.
  pool.on('error', (err) => opts.logger?.warn({ err: err.message }, 'idle PostgreSQL connection lost'));
  return pool;
}

/**
 * Connects, migrates (under an advisory lock, see migrate.ts) or checks the schema, and starts the
 * health check. Rejects with MigrationError for a schema it cannot use, or with the connection's
 * error when the database cannot be reached.
 */
export async function createPgStore(url: string, opts: PgStoreOptions = {}): Promise<AsyncStore> {
  const pool = createPgPool(url, opts);
  const location = describePgUrl(url);
  const replicaId = opts.replicaId ?? 'default';
  const log = opts.logger;
  try {
    const migrations = opts.migrations ?? loadPgMigrations();
    if (opts.migrate !== false) {
      const applied = await migratePg(pool, {
        migrations,
        ...(opts.schema !== undefined ? { schema: opts.schema } : {}),
      });
      if (applied.length > 0) log?.info({ applied, database: location }, 'database migrated');
    } else {
      await checkPgSchema(pool, migrations);
    }
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }

  const monitor = createHealthMonitor({
    check: pgCheck(pool, replicaId),
    classify: classifyPgError,
    logger: opts.logger,
    checkIntervalMs: opts.checkIntervalMs,
    checkRetryMs: opts.checkRetryMs,
    timers: opts.timers,
  });
  await monitor.check();
  monitor.start();
  return createPgStoreOver({ pool, location, monitor, signals: pgSignals(pool, log) });
}
