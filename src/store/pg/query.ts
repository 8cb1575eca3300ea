import type pg from 'pg';
import { type HealthMonitor, StoreUnavailableError } from '../health.js';

// Writes that do not wait for their commit to reach the disk.
//
// On the reply's path the bridge writes a few small rows before it asks the upstream: the dedup
// record, its place in the queue, the place's lease, the conversation's last use, the reply in
// flight. Each is its own transaction, and with PostgreSQL's default (synchronous_commit = on)
// each commit waits for a WAL flush: about half a millisecond unloaded, several under load, once
// per row. These rows are the kind SQLite keeps with synchronous = NORMAL (no flush per commit),
// so they are committed the same way here: asynchronously, for their own transaction only
// (set_config(..., true) is local to the transaction, and the setting in effect at commit decides;
// the session keeps the operator's setting). Nothing else changes: the row is visible to every
// other replica at once, locks and conflicts behave as before. A crash of the database server
// itself may lose the last fraction of a second of such writes (wal_writer_delay, 200 ms by
// default, times three at most), never corrupting anything; a crash of a replica loses nothing.
// Writes that must outlive a database crash (conversation mappings, Slack installations, OAuth
// states, votes) do not use it.

/** A one-row FROM item that makes the statement's transaction commit asynchronously. */
export const ASYNC_COMMIT = `(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit`;

/** One parameterised statement, as every repository here runs it. */
export type Query = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

/** A conditional write took effect. */
export const changed = (r: pg.QueryResult): boolean => (r.rowCount ?? 0) > 0;

/**
 * The store's one statement runner: storage failures are reported to the health monitor and
 * rethrown as StoreUnavailableError; a closed store refuses at once.
 */
export function guardedQuery(pool: pg.Pool, monitor: HealthMonitor, isOpen: () => boolean): Query {
  return async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => {
    if (!isOpen()) throw new StoreUnavailableError('closed', 'closed: the database has been closed');
    try {
      return await pool.query<R>(text, values);
    } catch (err) {
      const bad = monitor.report(err);
      if (bad) throw new StoreUnavailableError(bad.kind, bad.reason, { cause: err });
      throw err;
    }
  };
}

/** Runs `fn` in one transaction on one connection of the pool: its statements see each other. */
export type Transact = <T>(fn: (q: Query) => Promise<T>) => Promise<T>;

/**
 * guardedQuery's transactions: BEGIN, `fn` with that connection's statements, COMMIT (ROLLBACK
 * when `fn` throws). Storage failures are reported and rethrown as guardedQuery does.
 */
export function guardedTransaction(pool: pg.Pool, monitor: HealthMonitor, isOpen: () => boolean): Transact {
  return async <T>(fn: (q: Query) => Promise<T>): Promise<T> => {
    if (!isOpen()) throw new StoreUnavailableError('closed', 'closed: the database has been closed');
    try {
      const client = await pool.connect();
      let broken: unknown;
      try {
        await client.query('BEGIN');
        const result = await fn(<R extends pg.QueryResultRow>(text: string, values: unknown[] = []) =>
          client.query<R>(text, values),
        );
        await client.query('COMMIT');
        return result;
      } catch (err) {
        broken = err;
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        // A connection whose transaction failed (its rollback too, perhaps) is not handed on.
        client.release(broken !== undefined);
      }
    } catch (err) {
      const bad = monitor.report(err);
      if (bad) throw new StoreUnavailableError(bad.kind, bad.reason, { cause: err });
      throw err;
    }
  };
}
