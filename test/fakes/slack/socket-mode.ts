import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { type DeliveryChoice, pickConnection } from './socket-delivery.js';

// The fake Socket Mode server: `hello` on connect, events in envelopes, acks by envelope_id,
// server pings (Slack pings at least every 30 s; the client treats silence as a dead link).
// An app may hold several connections at once (Slack allows 10; every apps.connections.open
// gives a new one, e.g. one per replica): Slack sends each envelope to ONE of them, and a retry
// may reach another. Here each connection has a number (1, 2, … in the order they opened) and
// envelopes go round-robin over the open ones unless the sender names or avoids one.

export interface EnvelopeOptions extends DeliveryChoice {
  retryNum?: number;
  retryReason?: string;
  /** How long to wait for the ack. */
  ackTimeoutMs?: number;
}

/** One envelope sent: to which connection, and whether it was acked. */
export interface SocketDelivery {
  envelopeId: string;
  type: string;
  connection: number;
  retryAttempt: number;
  /** The Events API `event_id`, when the payload has one (a retry carries the first delivery's). */
  eventId: string | undefined;
  acked: boolean;
}

interface Connection {
  id: number;
  ws: WebSocket;
  /** Sent a `disconnect` (refresh): Slack's next envelopes go to the app's other connections. */
  retiring: boolean;
}

export class FakeSocketMode {
  private readonly wss = new WebSocketServer({ noServer: true });
  /** Open or closing connections, oldest first. */
  private readonly open = new Map<WebSocket, Connection>();
  private readonly pending = new Map<string, { resolve: (payload: unknown) => void; delivery: SocketDelivery }>();
  private readonly waiters = new Set<() => void>();
  private readonly log: SocketDelivery[] = [];
  private pingTimer: NodeJS.Timeout;
  private lastDelivered = 0;
  /** Connections ever accepted; also the number of the newest one. */
  connections = 0;

  constructor(server: Server, pingIntervalMs = 5000) {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (!(req.url ?? '').startsWith('/link')) {
        socket.destroy();
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
    });
    this.pingTimer = setInterval(() => {
      for (const ws of this.open.keys()) ws.ping();
    }, pingIntervalMs);
    this.pingTimer.unref();
  }

  private accept(ws: WebSocket): void {
    this.connections += 1;
    this.open.set(ws, { id: this.connections, ws, retiring: false });
    ws.on('close', () => {
      this.open.delete(ws);
      this.notify();
    });
    ws.on('message', (data) => {
      let msg: { envelope_id?: string; payload?: unknown };
      try {
        msg = JSON.parse(String(data)) as typeof msg;
      } catch {
        return;
      }
      const waiting = msg.envelope_id !== undefined ? this.pending.get(msg.envelope_id) : undefined;
      if (waiting && msg.envelope_id) {
        this.pending.delete(msg.envelope_id);
        waiting.delivery.acked = true;
        waiting.resolve(msg.payload);
      }
    });
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: this.usable().length,
        debug_info: { host: 'fake-slack', approximate_connection_time: 18060 },
        connection_info: { app_id: 'A0FAKE' },
      }),
    );
    this.notify();
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Open connections, oldest first. */
  private usable(): Connection[] {
    return [...this.open.values()].filter((c) => c.ws.readyState === c.ws.OPEN);
  }

  get connected(): boolean {
    return this.usable().length > 0;
  }

  /** The numbers of the open connections that take envelopes, oldest first. */
  get connectionIds(): number[] {
    return this.usable()
      .filter((c) => !c.retiring)
      .map((c) => c.id);
  }

  /** Every envelope sent so far, in order. */
  get deliveries(): readonly SocketDelivery[] {
    return this.log;
  }

  /** Resolves once a client is connected (immediately if one is). */
  waitConnected(): Promise<void> {
    return this.waitUntil(() => this.connected, 'a connection');
  }

  /** Resolves once exactly `count` connections take envelopes (more or fewer: keeps waiting). */
  waitConnections(count: number, timeoutMs = 10_000): Promise<void> {
    return this.waitUntil(() => this.connectionIds.length === count, `${count} connections`, timeoutMs);
  }

  /** Resolves once connection `id` is closed (immediately if it is). */
  waitClosed(id: number, timeoutMs = 10_000): Promise<void> {
    return this.waitUntil(() => !this.usable().some((c) => c.id === id), `connection ${id} to close`, timeoutMs);
  }

  private waitUntil(ok: () => boolean, what: string, timeoutMs?: number): Promise<void> {
    if (ok()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.waiters.delete(check);
              reject(new Error(`fake Socket Mode: no ${what} in ${timeoutMs} ms (open: ${this.connectionIds})`));
            }, timeoutMs);
      const check = () => {
        if (!ok()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }

  /** Sends an envelope to one connected client; resolves with the ack payload. */
  async send(type: string, payload: Record<string, unknown>, opts: EnvelopeOptions = {}): Promise<unknown> {
    return (await this.deliver(type, payload, opts)).ack;
  }

  /** Sends an envelope to one connected client; resolves with which one it was and the ack payload. */
  async deliver(
    type: string,
    payload: Record<string, unknown>,
    opts: EnvelopeOptions = {},
  ): Promise<{ connection: number; ack: unknown }> {
    // An app between two connections (its client reconnecting, say after a missed ping on a
    // busy machine) gets the event once it is back, as Slack holds and retries it; a test that
    // names or avoids a connection is answered at once.
    if (opts.connection === undefined && opts.avoid === undefined && this.usable().length === 0) {
      await this.waitUntil(() => this.usable().length > 0, 'connection to deliver to', 10_000).catch(() => {});
    }
    const usable = this.usable();
    const conn = pickConnection(usable, this.lastDelivered, opts);
    if (!conn)
      throw new Error(`fake Socket Mode: no connection for ${JSON.stringify(opts)} (open: ${this.connectionIds})`);
    // Round-robin goes on from the connection that took the last envelope a choice left to it.
    if (opts.connection === undefined) this.lastDelivered = conn.id;
    const envelope_id = randomUUID();
    const retryAttempt = opts.retryNum ?? 0;
    const delivery: SocketDelivery = {
      envelopeId: envelope_id,
      type,
      connection: conn.id,
      retryAttempt,
      eventId: typeof payload.event_id === 'string' ? payload.event_id : undefined,
      acked: false,
    };
    this.log.push(delivery);
    const acked = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(envelope_id);
        reject(new Error(`fake Socket Mode: no ack for ${envelope_id} on connection ${conn.id}`));
      }, opts.ackTimeoutMs ?? 3000);
      this.pending.set(envelope_id, {
        delivery,
        resolve: (p) => {
          clearTimeout(timer);
          resolve(p);
        },
      });
    });
    conn.ws.send(
      JSON.stringify({
        envelope_id,
        type,
        payload,
        accepts_response_payload: false,
        retry_attempt: retryAttempt,
        retry_reason: opts.retryReason ?? (retryAttempt > 0 ? 'timeout' : ''),
      }),
    );
    return { connection: conn.id, ack: await acked };
  }

  /** Asks clients to reconnect, as Slack does before it rotates a connection. */
  refresh(): void {
    for (const c of this.open.values()) {
      c.retiring = true;
      c.ws.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested' }));
    }
  }

  /** Cuts every connection without a word (network loss). */
  drop(): void {
    for (const ws of this.open.keys()) ws.terminate();
    this.open.clear();
    this.notify();
  }

  close(): void {
    clearInterval(this.pingTimer);
    this.drop();
    this.waiters.clear();
    this.wss.close();
  }
}
