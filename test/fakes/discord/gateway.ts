import { EventEmitter, once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { guildJson, userJson } from './payloads.js';
import type { FakeDiscordState } from './state.js';

// The gateway side of the fake: uncompressed JSON over WebSocket, HELLO → IDENTIFY → READY →
// GUILD_CREATE per guild, heartbeats, dispatches with increasing `s`, RESUME with replay.

const MESSAGE_CONTENT_INTENT = 1 << 15;

interface Dispatch {
  t: string;
  d: Record<string, unknown>;
  s: number;
}

interface Session {
  id: string;
  seq: number;
  intents: number;
  history: Dispatch[];
  socket: WebSocket | undefined;
}

export type GatewayEvent = 'identified' | 'resumed' | 'closed' | 'heartbeat';

export class FakeGateway {
  private readonly wss = new WebSocketServer({ noServer: true });
  private session: Session | undefined;
  private readonly sockets = new Set<WebSocket>();
  readonly events = new EventEmitter();
  /** Counts, so tests can assert what happened (identify vs resume). */
  readonly stats = { identifies: 0, resumes: 0, invalidSessions: 0 };
  /** Answer the next RESUME with INVALID_SESSION instead of replaying. */
  rejectNextResume = false;

  constructor(
    private readonly state: FakeDiscordState,
    private readonly token: string,
    private readonly urlBase: () => string,
    private readonly heartbeatIntervalMs: number,
  ) {}

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (url.searchParams.get('encoding') !== 'json' || url.searchParams.has('compress')) {
      // Only uncompressed JSON is spoken here; fail loudly rather than send garbage.
      socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws));
  }

  get hasSession(): boolean {
    return this.session !== undefined;
  }

  get connected(): boolean {
    return this.session?.socket !== undefined;
  }

  private onConnection(ws: WebSocket): void {
    this.sockets.add(ws);
    ws.on('close', () => {
      this.sockets.delete(ws);
      if (this.session?.socket === ws) this.session.socket = undefined;
      this.events.emit('closed');
    });
    ws.on('message', (raw) => this.onPayload(ws, raw.toString()));
    this.send(ws, { op: 10, d: { heartbeat_interval: this.heartbeatIntervalMs }, s: null, t: null });
  }

  private onPayload(ws: WebSocket, raw: string): void {
    let p: { op: number; d: unknown };
    try {
      p = JSON.parse(raw) as { op: number; d: unknown };
    } catch {
      ws.close(4002, 'Decode error');
      return;
    }
    switch (p.op) {
      case 1:
        this.send(ws, { op: 11, d: null, s: null, t: null });
        this.events.emit('heartbeat');
        return;
      case 2:
        this.identify(ws, p.d as { token: string; intents: number });
        return;
      case 6:
        this.resume(ws, p.d as { token: string; session_id: string; seq: number });
        return;
      default:
        // presence updates, voice state, request members: accepted and ignored
        return;
    }
  }

  private identify(ws: WebSocket, d: { token: string; intents: number }): void {
    if (d.token !== this.token && d.token !== `Bot ${this.token}`) {
      ws.close(4004, 'Authentication failed.');
      return;
    }
    this.stats.identifies += 1;
    this.session?.socket?.close(4009, 'Session replaced');
    this.session = { id: `sess-${this.state.nextId()}`, seq: 0, intents: d.intents, history: [], socket: ws };
    const guilds = [...this.state.guilds.keys()];
    this.dispatch('READY', {
      v: 10,
      user: { ...userJson(this.state.botUser), verified: true, mfa_enabled: false, flags: 0 },
      guilds: guilds.map((id) => ({ id, unavailable: true })),
      session_id: this.session.id,
      resume_gateway_url: this.urlBase(),
      shard: [0, 1],
      application: { id: this.state.applicationId, flags: 0 },
      private_channels: [],
      relationships: [],
      guild_join_requests: [],
      user_settings: {},
      presences: [],
    });
    for (const id of guilds) this.dispatch('GUILD_CREATE', guildJson(id, this.state));
    this.events.emit('identified');
  }

  private resume(ws: WebSocket, d: { token: string; session_id: string; seq: number }): void {
    const s = this.session;
    if (d.token !== this.token && d.token !== `Bot ${this.token}`) {
      ws.close(4004, 'Authentication failed.');
      return;
    }
    if (!s || s.id !== d.session_id || this.rejectNextResume) {
      this.rejectNextResume = false;
      this.stats.invalidSessions += 1;
      this.send(ws, { op: 9, d: false, s: null, t: null });
      return;
    }
    this.stats.resumes += 1;
    s.socket = ws;
    for (const ev of s.history) if (ev.s > d.seq) this.sendDispatch(ws, s, ev);
    this.dispatch('RESUMED', {});
    this.events.emit('resumed');
  }

  /** Send an event to the bot (and keep it for a RESUME replay). */
  dispatch(t: string, d: Record<string, unknown>): void {
    const s = this.session;
    if (!s) throw new Error('fake gateway: no session (the client has not identified)');
    s.seq += 1;
    const ev: Dispatch = { t, d, s: s.seq };
    s.history.push(ev);
    if (s.history.length > 1000) s.history.shift();
    if (s.socket) this.sendDispatch(s.socket, s, ev);
  }

  private sendDispatch(ws: WebSocket, s: Session, ev: Dispatch): void {
    let d = ev.d;
    // Without the privileged MESSAGE_CONTENT intent Discord blanks guild message content unless
    // the bot is mentioned; so does the fake, so a client missing the intent fails its tests.
    if (ev.t === 'MESSAGE_CREATE' && (s.intents & MESSAGE_CONTENT_INTENT) === 0 && d.guild_id !== undefined) {
      const mentions = (d.mentions as { id: string }[] | undefined) ?? [];
      if (!mentions.some((u) => u.id === this.state.botUser.id)) d = { ...d, content: '' };
    }
    this.send(ws, { op: 0, t: ev.t, s: ev.s, d });
  }

  private send(ws: WebSocket, payload: unknown): void {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(payload));
  }

  /** Drop the connection as Discord does on trouble; a resumable code by default. */
  disconnect(code = 4000): void {
    this.session?.socket?.close(code, 'fake disconnect');
  }

  waitFor(event: GatewayEvent, timeoutMs = 10_000): Promise<unknown[]> {
    return once(this.events, event, { signal: AbortSignal.timeout(timeoutMs) });
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}
