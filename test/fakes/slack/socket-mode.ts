import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';

// The fake Socket Mode server: `hello` on connect, events in envelopes, acks by envelope_id,
// server pings (Slack pings at least every 30 s; the client treats silence as a dead link).

export interface EnvelopeOptions {
  retryNum?: number;
  retryReason?: string;
  /** How long to wait for the ack. */
  ackTimeoutMs?: number;
}

export class FakeSocketMode {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sockets = new Set<WebSocket>();
  private readonly pending = new Map<string, (payload: unknown) => void>();
  private readonly waiters: (() => void)[] = [];
  private pingTimer: NodeJS.Timeout;
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
      for (const ws of this.sockets) ws.ping();
    }, pingIntervalMs);
    this.pingTimer.unref();
  }

  private accept(ws: WebSocket): void {
    this.connections += 1;
    this.sockets.add(ws);
    ws.on('close', () => this.sockets.delete(ws));
    ws.on('message', (data) => {
      let msg: { envelope_id?: string; payload?: unknown };
      try {
        msg = JSON.parse(String(data)) as typeof msg;
      } catch {
        return;
      }
      if (msg.envelope_id) {
        this.pending.get(msg.envelope_id)?.(msg.payload);
        this.pending.delete(msg.envelope_id);
      }
    });
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: this.sockets.size,
        debug_info: { host: 'fake-slack', approximate_connection_time: 18060 },
        connection_info: { app_id: 'A0FAKE' },
      }),
    );
    for (const w of this.waiters.splice(0)) w();
  }

  get connected(): boolean {
    return [...this.sockets].some((w) => w.readyState === w.OPEN);
  }

  /** Resolves once a client is connected (immediately if one is). */
  waitConnected(): Promise<void> {
    if (this.connected) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Sends an envelope to one connected client; resolves with the ack payload. */
  async send(type: string, payload: Record<string, unknown>, opts: EnvelopeOptions = {}): Promise<unknown> {
    // The newest open connection: after a reconnect the old one may still be closing.
    const ws = [...this.sockets].filter((w) => w.readyState === w.OPEN).at(-1);
    if (!ws) throw new Error('fake Socket Mode: no client connected');
    const envelope_id = randomUUID();
    const acked = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(envelope_id);
        reject(new Error(`fake Socket Mode: no ack for ${envelope_id}`));
      }, opts.ackTimeoutMs ?? 3000);
      this.pending.set(envelope_id, (p) => {
        clearTimeout(timer);
        resolve(p);
      });
    });
    ws.send(
      JSON.stringify({
        envelope_id,
        type,
        payload,
        accepts_response_payload: false,
        retry_attempt: opts.retryNum ?? 0,
        retry_reason: opts.retryReason ?? (opts.retryNum ? 'timeout' : ''),
      }),
    );
    return acked;
  }

  /** Asks clients to reconnect, as Slack does before it rotates a connection. */
  refresh(): void {
    for (const ws of this.sockets) ws.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested' }));
  }

  /** Cuts every connection without a word (network loss). */
  drop(): void {
    for (const ws of this.sockets) ws.terminate();
    this.sockets.clear();
  }

  close(): void {
    clearInterval(this.pingTimer);
    this.drop();
    this.wss.close();
  }
}
