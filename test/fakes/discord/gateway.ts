import { EventEmitter, once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { guildJson, userJson } from './payloads.js';
import { dispatchGuildId, type ShardPair, shardOf } from './shards.js';
import type { FakeDiscordState } from './state.js';

// The gateway side of the fake: uncompressed JSON over WebSocket, HELLO → IDENTIFY → READY →
// GUILD_CREATE per guild, heartbeats, dispatches with increasing `s`, RESUME with replay.
// Sharded as Discord is: IDENTIFY carries `shard: [id, count]` (absent: [0, 1]); one session per
// shard, each with its own sequence and replay history; a guild's events go to the session of
// shard `(guild_id >> 22) % count` only, events outside any guild (DMs) to shard 0 only.
// Trouble on demand, as Discord makes it: op 7 Reconnect; a zombie link (heartbeats go unanswered
// and nothing gets through until the client gives up on the connection and resumes); a client
// closing with 1000/1001 ends its session (a later RESUME gets op 9); and, when `identifyLimit` is
// given, IDENTIFYs of one bucket (shard id % max_concurrency) closer than its window apart get
// op 9 Invalid Session, as Discord answers an identify over the limit.

const MESSAGE_CONTENT_INTENT = 1 << 15;

interface Dispatch {
  t: string;
  d: Record<string, unknown>;
  s: number;
}

interface Session {
  id: string;
  shard: ShardPair;
  seq: number;
  intents: number;
  history: Dispatch[];
  socket: WebSocket | undefined;
}

/** 'identified' and 'resumed' carry the shard id and count; 'closed' the shard id when known. */
export type GatewayEvent =
  'identified' | 'resumed' | 'closed' | 'heartbeat' | 'heartbeat-unanswered' | 'identify-refused';

/** Discord's identify limit: `maxConcurrency` identifies per `windowMs` (5000 on Discord) per bucket. */
export interface IdentifyLimit {
  maxConcurrency: number;
  windowMs: number;
}

/** A shard's IDENTIFY/RESUME held back until the test releases it (a slow or stuck shard). */
export interface ShardHold {
  /** Resolves when the shard's first IDENTIFY or RESUME has arrived (and waits). */
  readonly reached: Promise<void>;
  release(): void;
}

export class FakeGateway {
  private readonly wss = new WebSocketServer({ noServer: true });
  /** Live sessions by `id/count`; a new IDENTIFY for a shard replaces its session. */
  private readonly sessions = new Map<string, Session>();
  private readonly holds = new Map<number, { gate: Promise<void>; arrived: () => void; open: () => void }>();
  private readonly sockets = new Set<WebSocket>();
  readonly events = new EventEmitter();
  /** Counts, so tests can assert what happened (identify vs resume). */
  readonly stats = {
    identifies: 0,
    resumes: 0,
    invalidSessions: 0,
    reconnectsSent: 0,
    unansweredHeartbeats: 0,
    identifiesRefused: 0,
  };
  /** Connections gone zombie: no heartbeat ACK, no dispatch (the session's history keeps them). */
  private readonly zombies = new WeakSet<WebSocket>();
  /** Connections told to reconnect (op 7): Discord sends them no more dispatches. */
  private readonly retired = new WeakSet<WebSocket>();
  /** When each identify bucket last let an IDENTIFY through. */
  private readonly lastIdentify = new Map<number, number>();
  /** Answer the next RESUME with INVALID_SESSION instead of replaying. */
  rejectNextResume = false;

  constructor(
    private readonly state: FakeDiscordState,
    private readonly token: string,
    private readonly urlBase: () => string,
    private readonly heartbeatIntervalMs: number,
    private readonly identifyLimit?: IdentifyLimit,
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
    return this.sessions.size > 0;
  }

  /** Some shard is connected. */
  get connected(): boolean {
    return [...this.sessions.values()].some((s) => s.socket !== undefined);
  }

  /** The shards with a live connection now, as [id, count], by id. */
  connectedShards(): ShardPair[] {
    return [...this.sessions.values()]
      .filter((s) => s.socket !== undefined)
      .map((s) => s.shard)
      .sort((a, b) => a[0] - b[0]);
  }

  /** Hold shard `shardId`'s next IDENTIFY or RESUME (and any after it) until released. */
  holdShard(shardId: number): ShardHold {
    let arrived!: () => void;
    let open!: () => void;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const gate = new Promise<void>((resolve) => (open = resolve));
    const hold = { gate, arrived, open };
    this.holds.set(shardId, hold);
    return {
      reached,
      release: () => {
        if (this.holds.get(shardId) === hold) this.holds.delete(shardId);
        open();
      },
    };
  }

  private onConnection(ws: WebSocket): void {
    this.sockets.add(ws);
    ws.on('close', (code) => {
      this.sockets.delete(ws);
      let shardId: number | undefined;
      for (const [key, s] of this.sessions) {
        if (s.socket !== ws) continue;
        s.socket = undefined;
        shardId = s.shard[0];
        // As on Discord: a client that closes with 1000 or 1001 ends its session.
        if (code === 1000 || code === 1001) this.sessions.delete(key);
      }
      this.events.emit('closed', shardId);
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
        if (this.zombies.has(ws)) {
          this.stats.unansweredHeartbeats += 1;
          this.events.emit('heartbeat-unanswered');
          return;
        }
        this.send(ws, { op: 11, d: null, s: null, t: null });
        this.events.emit('heartbeat');
        return;
      case 2: {
        const d = p.d as IdentifyData;
        void this.afterHold(d.shard?.[0] ?? 0, ws, () => this.identify(ws, d));
        return;
      }
      case 6: {
        const d = p.d as ResumeData;
        const shardId = this.sessionById(d.session_id)?.shard[0] ?? 0;
        void this.afterHold(shardId, ws, () => this.resume(ws, d));
        return;
      }
      default:
        // presence updates, voice state, request members: accepted and ignored
        return;
    }
  }

  /** Run `then` now, or once the test releases a hold on the shard (if the socket is still open). */
  private async afterHold(shardId: number, ws: WebSocket, then: () => void): Promise<void> {
    const hold = this.holds.get(shardId);
    if (hold !== undefined) {
      hold.arrived();
      await hold.gate;
      if (ws.readyState !== ws.OPEN) return;
    }
    then();
  }

  private sessionById(id: string): Session | undefined {
    return [...this.sessions.values()].find((s) => s.id === id);
  }

  private identify(ws: WebSocket, d: IdentifyData): void {
    if (d.token !== this.token && d.token !== `Bot ${this.token}`) {
      ws.close(4004, 'Authentication failed.');
      return;
    }
    const shard: ShardPair = d.shard ?? [0, 1];
    const [shardId, shardCount] = shard;
    if (
      !Number.isInteger(shardId) ||
      !Number.isInteger(shardCount) ||
      shardCount < 1 ||
      shardId < 0 ||
      shardId >= shardCount
    ) {
      ws.close(4010, 'Invalid shard.');
      return;
    }
    if (this.identifyLimit !== undefined) {
      // Discord answers an IDENTIFY over the bucket's limit with op 9 (not resumable).
      const bucket = shardId % this.identifyLimit.maxConcurrency;
      const now = Date.now();
      const last = this.lastIdentify.get(bucket);
      if (last !== undefined && now - last < this.identifyLimit.windowMs) {
        this.stats.identifiesRefused += 1;
        this.send(ws, { op: 9, d: false, s: null, t: null });
        this.events.emit('identify-refused', shardId, now - last);
        return;
      }
      this.lastIdentify.set(bucket, now);
    }
    this.stats.identifies += 1;
    const key = `${shardId}/${shardCount}`;
    this.sessions.get(key)?.socket?.close(4009, 'Session replaced');
    const session: Session = {
      id: `sess-${this.state.nextId()}`,
      shard,
      seq: 0,
      intents: d.intents,
      history: [],
      socket: ws,
    };
    this.sessions.set(key, session);
    // Discord lists, and then creates, only the guilds of the identifying shard.
    const guilds = [...this.state.guilds.keys()].filter((id) => shardOf(id, shardCount) === shardId);
    this.push(session, 'READY', {
      v: 10,
      user: { ...userJson(this.state.botUser), verified: true, mfa_enabled: false, flags: 0 },
      guilds: guilds.map((id) => ({ id, unavailable: true })),
      session_id: session.id,
      resume_gateway_url: this.urlBase(),
      shard,
      application: { id: this.state.applicationId, flags: 0 },
      private_channels: [],
      relationships: [],
      guild_join_requests: [],
      user_settings: {},
      presences: [],
    });
    for (const id of guilds) this.push(session, 'GUILD_CREATE', guildJson(id, this.state));
    this.events.emit('identified', shardId, shardCount);
  }

  private resume(ws: WebSocket, d: ResumeData): void {
    if (d.token !== this.token && d.token !== `Bot ${this.token}`) {
      ws.close(4004, 'Authentication failed.');
      return;
    }
    const s = this.sessionById(d.session_id);
    if (!s || this.rejectNextResume) {
      this.rejectNextResume = false;
      this.stats.invalidSessions += 1;
      this.send(ws, { op: 9, d: false, s: null, t: null });
      return;
    }
    this.stats.resumes += 1;
    s.socket = ws;
    for (const ev of s.history) if (ev.s > d.seq) this.sendDispatch(ws, s, ev);
    this.push(s, 'RESUMED', {});
    this.events.emit('resumed', s.shard[0], s.shard[1]);
  }

  /**
   * Send an event to the bot (and keep it for a RESUME replay): to the session of the shard its
   * guild belongs to, or shard 0's when it has no guild. No session for that shard: it is lost,
   * as on Discord.
   */
  dispatch(t: string, d: Record<string, unknown>): void {
    if (this.sessions.size === 0) throw new Error('fake gateway: no session (the client has not identified)');
    const guildId = dispatchGuildId(t, d);
    for (const s of this.sessions.values()) {
      const [shardId, shardCount] = s.shard;
      const target = guildId === undefined ? 0 : shardOf(guildId, shardCount);
      if (target === shardId) this.push(s, t, d);
    }
  }

  private push(s: Session, t: string, d: Record<string, unknown>): void {
    s.seq += 1;
    const ev: Dispatch = { t, d, s: s.seq };
    s.history.push(ev);
    if (s.history.length > 1000) s.history.shift();
    if (s.socket && !this.zombies.has(s.socket) && !this.retired.has(s.socket)) this.sendDispatch(s.socket, s, ev);
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

  /**
   * Op 7 Reconnect to the connection of every shard, or of one: the client should reconnect and
   * resume; that connection gets no dispatch after it (they wait in the history for the RESUME).
   */
  requestReconnect(shardId?: number): void {
    for (const s of this.sessions.values()) {
      if (s.socket === undefined || (shardId !== undefined && s.shard[0] !== shardId)) continue;
      this.stats.reconnectsSent += 1;
      this.send(s.socket, { op: 7, d: null, s: null, t: null });
      this.retired.add(s.socket);
    }
  }

  /**
   * Turn the connection of every shard, or of one, into a zombie: its heartbeats go unanswered and
   * no dispatch reaches it (they stay in the session's history for a RESUME), until the client
   * gives up on it. The next connection is healthy.
   */
  zombify(shardId?: number): void {
    for (const s of this.sessions.values()) {
      if (s.socket !== undefined && (shardId === undefined || s.shard[0] === shardId)) this.zombies.add(s.socket);
    }
  }

  /** Drop the connection (of every shard, or of one) as Discord does on trouble; a resumable code by default. */
  disconnect(code = 4000, shardId?: number): void {
    for (const s of this.sessions.values()) {
      if (shardId === undefined || s.shard[0] === shardId) s.socket?.close(code, 'fake disconnect');
    }
  }

  waitFor(event: GatewayEvent, timeoutMs = 10_000): Promise<unknown[]> {
    return once(this.events, event, { signal: AbortSignal.timeout(timeoutMs) });
  }

  async close(): Promise<void> {
    for (const hold of this.holds.values()) hold.open();
    this.holds.clear();
    for (const ws of this.sockets) ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

interface IdentifyData {
  token: string;
  intents: number;
  shard?: ShardPair;
}

interface ResumeData {
  token: string;
  session_id: string;
  seq: number;
}
