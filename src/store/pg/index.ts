import pg from 'pg';
import { pgSignals } from './signals.js';
import { type ConversationRecord, type ExpectedUpstreamId, type Place, placeKey } from '../../core/ports.js';
import { type AsyncStore, BUDGET_KEEP_MS, HANDOVER_KEEP_MS } from '../ports.js';
import { createHealthMonitor, type StoreHealth, type StoreProbeOptions, StoreUnavailableError } from '../health.js';
import type { InstallationKey } from '../ports.js';
import type { Migration } from '../migrate.js';
import {
  conversationFromRow,
  conversationParams,
  type ConversationRow,
  type InFlightRow,
  ownedFromRow,
} from '../rows.js';
import { ASYNC_COMMIT } from './async-commit.js';
import { classifyPgError } from './errors.js';
import { pgBudgets, pgLeases, pgReplicas, type Query } from './coordination.js';
import { pgFeedback } from './feedback.js';
import { checkPgSchema, loadPgMigrations, migratePg, pgSchemaVersion, quoteIdent } from './migrate.js';
import { pgOAuthStates } from './oauth-states.js';

export { classifyPgError } from './errors.js';
export { pgFeedback } from './feedback.js';
export { checkPgSchema, defaultPgMigrationsDir, loadPgMigrations, migratePg, pgSchemaVersion } from './migrate.js';

// The async store port on PostgreSQL, for several replicas sharing one database. A small pool;
// every statement parameterised and bounded by a statement timeout, so a stuck database shows as
// a failed operation (and on /readyz) rather than as replies that hang. Races between replicas are
// settled by the database: ON CONFLICT for insert-if-absent and upserts, conditional UPDATEs for
// compare-and-set (under READ COMMITTED the second writer waits for the first's row lock, then
// re-checks the condition against the row the first committed).

export interface PgStoreOptions extends StoreProbeOptions {
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
  // process. The next query gets a fresh connection, and the health probe reports the outage.
  pool.on('error', (err) => opts.logger?.warn({ err: err.message }, 'idle PostgreSQL connection lost'));
  return pool;
}

const CONVERSATION_VALUES = `($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`;
const CONVERSATION_COLUMNS = `(place_key, platform, workspace_id, channel_id, thread_id, bot_id, flavor, upstream_id, created_at, last_used_at)`;

function conversationArgs(place: Place, rec: ConversationRecord): unknown[] {
  const p = conversationParams(place, rec);
  return [
    p.key,
    p.platform,
    p.workspaceId,
    p.channelId,
    p.threadId,
    p.botId,
    p.flavor,
    p.upstreamId,
    p.createdAt,
    p.lastUsedAt,
  ];
}

/**
 * Connects, migrates (under an advisory lock, see migrate.ts) or checks the schema, and starts the
 * health probe. Rejects with MigrationError for a schema it cannot use, or with the connection's
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

  let open = true;
  // The probe commits a real write, under this replica's own row.
  const probe = async (): Promise<StoreHealth> => {
    try {
      await pool.query(
        `INSERT INTO store_health (replica_id, probed_at) VALUES ($1, $2)
         ON CONFLICT (replica_id) DO UPDATE SET probed_at = excluded.probed_at`,
        [replicaId, Date.now()],
      );
      return { ok: true };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return classifyPgError(err) ?? { ok: false, kind: 'io', reason: `probe failed: ${message}` };
    }
  };
  const monitor = createHealthMonitor({
    probe,
    classify: classifyPgError,
    logger: opts.logger,
    probeIntervalMs: opts.probeIntervalMs,
    probeRetryMs: opts.probeRetryMs,
    timers: opts.timers,
  });

  /** One statement; storage failures are reported to the monitor and rethrown as StoreUnavailableError. */
  const q: Query = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => {
    if (!open) throw new StoreUnavailableError('closed', 'closed: the database has been closed');
    try {
      return await pool.query<R>(text, values);
    } catch (err) {
      const bad = monitor.report(err);
      if (bad) throw new StoreUnavailableError(bad.kind, bad.reason, { cause: err });
      throw err;
    }
  };
  const changed = (r: pg.QueryResult) => (r.rowCount ?? 0) > 0;

  const replicas = pgReplicas(q);
  const leases = pgLeases(q);

  await monitor.probe();
  monitor.start();

  const signals = pgSignals(pool, log);
  const installKey = (key: InstallationKey) => [key.teamId ?? '', key.enterpriseId ?? ''];

  return {
    backend: 'postgres',
    location,
    conversations: {
      async get(place) {
        const r = await q<ConversationRow>('SELECT * FROM conversations WHERE place_key = $1', [placeKey(place)]);
        const row = r.rows[0];
        return row ? conversationFromRow(row) : undefined;
      },
      async put(rec) {
        await q(
          `INSERT INTO conversations ${CONVERSATION_COLUMNS} VALUES ${CONVERSATION_VALUES}
           ON CONFLICT (place_key) DO UPDATE SET bot_id = excluded.bot_id, flavor = excluded.flavor,
             upstream_id = excluded.upstream_id, created_at = excluded.created_at, last_used_at = excluded.last_used_at`,
          conversationArgs(rec.place, rec),
        );
      },
      async touch(place, at) {
        await q(`UPDATE conversations SET last_used_at = $1 FROM ${ASYNC_COMMIT} WHERE place_key = $2`, [
          at,
          placeKey(place),
        ]);
      },
      async prune(before) {
        return (await q('DELETE FROM conversations WHERE last_used_at < $1', [before])).rowCount ?? 0;
      },
      async delete(place) {
        await q('DELETE FROM conversations WHERE place_key = $1', [placeKey(place)]);
      },
      async replaceIfUnchanged(place: Place, expected: ExpectedUpstreamId, next: ConversationRecord) {
        const args = conversationArgs(place, next);
        if (expected === undefined) {
          return changed(
            await q(
              `INSERT INTO conversations ${CONVERSATION_COLUMNS} VALUES ${CONVERSATION_VALUES} ON CONFLICT (place_key) DO NOTHING`,
              args,
            ),
          );
        }
        if (expected === null) {
          return changed(
            await q(
              `UPDATE conversations SET bot_id = $2, flavor = $3, upstream_id = $4, created_at = $5, last_used_at = $6
               WHERE place_key = $1 AND upstream_id IS NULL`,
              [args[0], args[5], args[6], args[7], args[8], args[9]],
            ),
          );
        }
        return changed(
          await q(
            `UPDATE conversations SET bot_id = $2, flavor = $3, upstream_id = $4, created_at = $5, last_used_at = $6
             WHERE place_key = $1 AND upstream_id = $7`,
            [args[0], args[5], args[6], args[7], args[8], args[9], expected],
          ),
        );
      },
    },
    events: {
      async wasSeen(platform, eventId) {
        const r = await q('SELECT 1 FROM processed_events WHERE platform = $1 AND event_id = $2', [platform, eventId]);
        return r.rows.length > 0;
      },
      async markSeen(platform, eventId, at) {
        return changed(
          await q(
            `INSERT INTO processed_events (platform, event_id, seen_at) SELECT $1, $2, $3 FROM ${ASYNC_COMMIT}
             ON CONFLICT DO NOTHING`,
            [platform, eventId, at],
          ),
        );
      },
      async prune(before) {
        return (await q('DELETE FROM processed_events WHERE seen_at < $1', [before])).rowCount ?? 0;
      },
    },
    inflight: {
      async begin(rec) {
        const r = await q<{ id: number }>(
          `INSERT INTO replies_in_flight (platform, event_id, target, upstream_id, owner, started_at, updated_at)
           SELECT $1, $2, $3, $4, $5, $6, $6 FROM ${ASYNC_COMMIT} RETURNING id`,
          [rec.platform, rec.eventId, JSON.stringify(rec.target), rec.upstreamId ?? null, rec.owner, rec.at],
        );
        const id = r.rows[0]?.id;
        if (id === undefined) throw new Error('INSERT ... RETURNING id returned no row');
        return id;
      },
      async progress(id, messageIds, lastText, at) {
        await q(
          `UPDATE replies_in_flight SET message_ids = $1, last_text = $2, updated_at = $3 FROM ${ASYNC_COMMIT} WHERE id = $4`,
          [JSON.stringify(messageIds), lastText, at, id],
        );
      },
      async setUpstreamId(id, upstreamId) {
        await q('UPDATE replies_in_flight SET upstream_id = $1 WHERE id = $2', [upstreamId, id]);
      },
      async finish(id, state, at) {
        await q('UPDATE replies_in_flight SET state = $1, updated_at = $2 WHERE id = $3', [state, at, id]);
      },
      async listOpen(platform) {
        const r =
          platform === undefined
            ? await q<InFlightRow>("SELECT * FROM replies_in_flight WHERE state = 'streaming' ORDER BY id")
            : await q<InFlightRow>(
                "SELECT * FROM replies_in_flight WHERE state = 'streaming' AND platform = $1 ORDER BY id",
                [platform],
              );
        return r.rows.map(ownedFromRow);
      },
      async listOpenOwnedBy(owners) {
        if (owners.length === 0) return [];
        const r = await q<InFlightRow>(
          "SELECT * FROM replies_in_flight WHERE state = 'streaming' AND owner = ANY($1::text[]) ORDER BY id",
          [[...owners]],
        );
        return r.rows.map(ownedFromRow);
      },
      async claim(id, from, to, at) {
        return changed(
          await q(
            "UPDATE replies_in_flight SET owner = $1, updated_at = $2 WHERE id = $3 AND owner = $4 AND state = 'streaming'",
            [to, at, id, from],
          ),
        );
      },
      async prune(before) {
        return (
          (await q("DELETE FROM replies_in_flight WHERE state <> 'streaming' AND updated_at < $1", [before]))
            .rowCount ?? 0
        );
      },
    },
    installations: {
      async save(key, userId, json, at) {
        await q(
          `INSERT INTO slack_installations (team_id, enterprise_id, user_id, installation, updated_at) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (team_id, enterprise_id) DO UPDATE SET user_id = excluded.user_id,
             installation = excluded.installation, updated_at = excluded.updated_at`,
          [...installKey(key), userId ?? null, json, at],
        );
      },
      async find(key) {
        const r = await q<{ installation: string }>(
          'SELECT installation FROM slack_installations WHERE team_id = $1 AND enterprise_id = $2',
          installKey(key),
        );
        if (r.rows[0]) return r.rows[0].installation;
        // An org-wide install answers for every team of its enterprise.
        if (!key.enterpriseId) return undefined;
        const org = await q<{ installation: string }>(
          "SELECT installation FROM slack_installations WHERE enterprise_id = $1 AND team_id = ''",
          [key.enterpriseId],
        );
        return org.rows[0]?.installation;
      },
      async delete(key) {
        return (
          (await q('DELETE FROM slack_installations WHERE team_id = $1 AND enterprise_id = $2', installKey(key)))
            .rowCount ?? 0
        );
      },
      async count() {
        const r = await q<{ n: number }>('SELECT COUNT(*)::int AS n FROM slack_installations');
        return r.rows[0]?.n ?? 0;
      },
    },
    replicas,
    leases,
    budgets: pgBudgets(q),
    feedback: pgFeedback(q),
    oauthStates: pgOAuthStates(q),
    signals,
    async housekeeping(now) {
      const handovers = await q('DELETE FROM place_handover WHERE released_at < $1', [now - HANDOVER_KEEP_MS]);
      const budgets = await q('DELETE FROM learned_budgets WHERE updated_at < $1', [now - BUDGET_KEEP_MS]);
      return { handovers: handovers.rowCount ?? 0, budgets: budgets.rowCount ?? 0 };
    },
    schemaVersion: () => pgSchemaVersion(pool),
    isOpen: () => open,
    health: () => monitor.health(),
    probe: () => monitor.probe(),
    onHealthChange: (listener) => monitor.onChange(listener),
    async close() {
      if (!open) return;
      open = false;
      monitor.stop();
      await signals.close();
      await pool.end();
    },
  };
}
