import type pg from 'pg';
import type { Logger } from 'pino';
import type { StoreSignals } from '../ports.js';

// Messages between replicas through PostgreSQL's LISTEN/NOTIFY: one pooled connection per replica
// is kept for listening (opened at the first subscription, and again after it drops), and a
// NOTIFY is an ordinary statement. Used for what must reach another replica at once (a Stop for a
// reply that replica writes), never for what must not be lost: that goes in tables.

const RECONNECT_MS = 1000;
/** Channel names are identifiers we choose; keep them plain so they need no quoting. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

export interface PgSignals extends StoreSignals {
  close(): Promise<void>;
}

export function pgSignals(pool: pg.Pool, logger: Logger | undefined): PgSignals {
  const handlers = new Map<string, Array<(payload: string) => void>>();
  let client: pg.PoolClient | undefined;
  let connecting: Promise<void> | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const onNotification = (n: pg.Notification) => {
    for (const h of handlers.get(n.channel) ?? []) {
      try {
        h(n.payload ?? '');
      } catch (err) {
        logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'a signal handler failed');
      }
    }
  };

  const listen = (): Promise<void> =>
    (connecting ??= (async () => {
      try {
        const c = await pool.connect();
        c.on('notification', onNotification);
        c.on('error', (err) => {
          logger?.warn({ err: err.message }, 'the listening PostgreSQL connection failed; reconnecting');
          c.release(err);
          if (client === c) client = undefined;
          scheduleReconnect();
        });
        for (const channel of handlers.keys()) await c.query(`LISTEN ${channel}`);
        client = c;
      } catch (err) {
        logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not listen for signals');
        scheduleReconnect();
      } finally {
        connecting = undefined;
      }
    })());

  function scheduleReconnect(): void {
    if (closed || retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      void listen();
    }, RECONNECT_MS);
    retry.unref();
  }

  return {
    async publish(channel, payload) {
      if (!CHANNEL.test(channel)) throw new Error(`bad signal channel ${channel}`);
      await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
    subscribe(channel, onMessage) {
      if (!CHANNEL.test(channel)) throw new Error(`bad signal channel ${channel}`);
      const list = handlers.get(channel);
      if (list !== undefined) {
        list.push(onMessage);
        return;
      }
      handlers.set(channel, [onMessage]);
      if (client !== undefined) {
        void client.query(`LISTEN ${channel}`).catch((err: unknown) => {
          logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'LISTEN failed');
        });
      } else void listen();
    },
    async close() {
      closed = true;
      if (retry !== undefined) clearTimeout(retry);
      await connecting;
      client?.release();
      client = undefined;
    },
  };
}
