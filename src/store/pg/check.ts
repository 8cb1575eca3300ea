import type pg from 'pg';
import { type StoreFailure, type StoreFailureKind, type StoreHealth, StoreUnavailableError } from '../health.js';

// PostgreSQL's storage health, as sqlite/check.ts gives SQLite's: the periodic check commits a real
// write; every statement's storage errors mark the store unhealthy at once (query.ts). Its failures
// are said in the store's own terms (StoreFailureKind), so /readyz, doctor and the core read them
// the same as SQLite's. Errors about the data (a constraint, a type) are not
// storage failures: undefined.

const PREFIX: Record<StoreFailureKind, string> = {
  readonly: 'not writable',
  missing: 'missing',
  locked: 'locked',
  full: 'disk full',
  io: 'unreachable',
  corrupt: 'corrupt',
  closed: 'closed',
};

const failure = (kind: StoreFailureKind, detail: string): StoreFailure => ({
  ok: false,
  kind,
  reason: `${PREFIX[kind]}: ${detail}`,
});

/** Node's socket errors: the server is not there, or went away. */
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'EPIPE', 'EAI_AGAIN']);

export function classifyPgError(err: unknown): StoreFailure | undefined {
  if (err instanceof StoreUnavailableError) return { ok: false, kind: err.kind, reason: err.message };
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (NETWORK.has(code)) return failure('io', `${code}: ${message}`);
    // SQLSTATE, https://www.postgresql.org/docs/current/errcodes-appendix.html
    if (code === '25006') return failure('readonly', message); // read_only_sql_transaction (a standby)
    if (code === '53100') return failure('full', message); // disk_full
    if (code === '55P03' || code === '57014') return failure('locked', message); // lock_not_available, statement timeout
    if (code === '3D000' || code === '3F000') return failure('missing', message); // no such database / schema
    // object_not_in_prerequisite_state: at connect, the database takes no connections for now
    // (ALLOW_CONNECTIONS false during maintenance); otherwise an error about the statement.
    if (code === '55000' && /not currently accepting connections/i.test(message)) return failure('io', message);
    if (code === 'XX001' || code === 'XX002') return failure('corrupt', message); // data_corrupted, index_corrupted
    // connection exceptions, insufficient resources, shutdowns, authentication
    if (/^(08|53|57P|28)/.test(code)) return failure('io', message);
    return undefined;
  }
  if (/pool after calling end|Client was closed/i.test(message)) return failure('closed', message);
  if (
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|not queryable/i.test(
      message,
    )
  ) {
    return failure('io', message);
  }
  return undefined;
}

/** PostgreSQL's check for the store's health monitor: commits a real write, under this replica's own row. */
export function pgCheck(pool: pg.Pool, replicaId: string): () => Promise<StoreHealth> {
  return async () => {
    try {
      await pool.query(
        `INSERT INTO store_health (replica_id, probed_at) VALUES ($1, $2)
         ON CONFLICT (replica_id) DO UPDATE SET probed_at = excluded.probed_at`,
        [replicaId, Date.now()],
      );
      return { ok: true };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // The reason's wording is what /readyz has always shown.
      return classifyPgError(err) ?? { ok: false, kind: 'io', reason: `probe failed: ${message}` };
    }
  };
}
