import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FakeGateway } from './gateway.js';
import { HttpError, notFound, sendJson } from './http-util.js';
import { readBody } from './attachments.js';
import { MessageWrites } from './message-writes.js';
import { channelJson, messageJson, userJson } from './payloads.js';
import { FakePlatformLimits } from './platform-limits.js';
import type { FakeRateLimiter } from './rate-limit.js';
import { type DiscordRefusal, invalidFormBody } from './refusals.js';
import type { FakeCommand, FakeDiscordState } from './state.js';
import type { FaultSource } from '../chaos.js';
import { maybeLoseAnswer } from './nonce.js';

// The REST side of the fake under /api/v10: the routes discord.js and the connector use.

type Params = string[];
type Handler = (
  p: Params,
  body: Record<string, unknown>,
  url: URL,
) =>
  | { status: number; body: unknown; headers?: Record<string, string> }
  | Promise<{ status: number; body: unknown; headers?: Record<string, string> }>;

interface Route {
  method: string;
  pattern: RegExp;
  /** Routes authorised by the interaction token in the path, not the bot token. */
  tokenInPath?: boolean;
  handler: Handler;
}

/** A held route: the bot's matching requests wait until the test releases them. */
export interface RouteHold {
  /** Resolves when the first matching request has arrived (and is waiting). */
  readonly reached: Promise<void>;
  release(): void;
}

interface Hold extends RouteHold {
  method: string;
  path: string;
  gate: Promise<void>;
  arrived(): void;
}

/** What GET /gateway/bot recommends. */
export interface GatewayInfo {
  /** `shards`: the recommended shard count. */
  shards: number;
  /** `session_start_limit.max_concurrency`: identifies per 5 s (discord.js spaces shards by it). */
  maxConcurrency: number;
}

const ID = '(\\d+)';
const TOKEN = '([^/]+)';

export class FakeRest {
  private readonly routes: Route[];
  private readonly writes: MessageWrites;
  private readonly holds = new Set<Hold>();
  /** Global and shared-scope 429s on demand (platform-limits.ts). */
  readonly limits = new FakePlatformLimits();
  /** Refuses message writes for their form before they take effect (refusals.ts). */
  refuse: DiscordRefusal | undefined;
  /** Lost answers (nonce.ts): a write the source picks takes effect and its answer is dropped. */
  faults: FaultSource | undefined;

  constructor(
    private readonly state: FakeDiscordState,
    private readonly token: string,
    limiter: FakeRateLimiter,
    gateway: FakeGateway,
    private readonly gatewayUrl: () => string,
    private readonly gatewayInfo: GatewayInfo = { shards: 1, maxConcurrency: 1 },
  ) {
    this.writes = new MessageWrites(state, limiter, gateway);
    const w = this.writes;
    const ok = (body: unknown, status = 200) => ({ status, body });
    this.routes = [
      { method: 'GET', pattern: /^\/gateway\/bot$/, handler: () => ok(this.gatewayBot()) },
      { method: 'GET', pattern: /^\/gateway$/, handler: () => ok({ url: this.gatewayUrl() }) },
      { method: 'GET', pattern: /^\/users\/@me$/, handler: () => ok(userJson(state.botUser)) },
      { method: 'GET', pattern: /^\/(?:oauth2\/)?applications\/@me$/, handler: () => ok(this.application()) },
      { method: 'GET', pattern: rx(`/channels/${ID}`), handler: ([c]) => ok(this.channel(c)) },
      {
        method: 'POST',
        pattern: rx(`/channels/${ID}/typing`),
        handler: ([c]) => {
          state.typing.push(c ?? '');
          return ok(null, 204);
        },
      },
      { method: 'POST', pattern: rx(`/channels/${ID}/messages`), handler: ([c], b) => w.create(c, b) },
      { method: 'GET', pattern: rx(`/channels/${ID}/messages`), handler: ([c], _b, u) => ok(this.history(c, u)) },
      { method: 'PATCH', pattern: rx(`/channels/${ID}/messages/${ID}`), handler: ([c, m], b) => w.edit(c, m, b) },
      { method: 'DELETE', pattern: rx(`/channels/${ID}/messages/${ID}`), handler: ([c, m]) => w.remove(c, m) },
      {
        method: 'POST',
        pattern: rx(`/channels/${ID}/messages/${ID}/threads`),
        handler: ([c, m], b) => w.startThread(c, m, b),
      },
      {
        method: 'GET',
        pattern: rx(`/applications/${ID}/commands`),
        handler: () => ok(state.commands.get('global') ?? []),
      },
      {
        method: 'PUT',
        pattern: rx(`/applications/${ID}/commands`),
        handler: (_p, b) => ok(this.putCommands('global', b)),
      },
      {
        method: 'GET',
        pattern: rx(`/applications/${ID}/guilds/${ID}/commands`),
        handler: ([, g]) => ok(state.commands.get(String(g)) ?? []),
      },
      {
        method: 'PUT',
        pattern: rx(`/applications/${ID}/guilds/${ID}/commands`),
        handler: ([, g], b) => ok(this.putCommands(String(g), b)),
      },
      {
        method: 'POST',
        pattern: rx(`/interactions/${ID}/${TOKEN}/callback`),
        tokenInPath: true,
        handler: ([i, t], b, u) => w.interactionCallback(i, t, b, u),
      },
      {
        method: 'POST',
        pattern: rx(`/webhooks/${ID}/${TOKEN}`),
        tokenInPath: true,
        handler: ([, t], b) => w.followUp(t, b),
      },
      {
        method: 'PATCH',
        pattern: rx(`/webhooks/${ID}/${TOKEN}/messages/(@original|\\d+)`),
        tokenInPath: true,
        handler: ([, t, m], b) => w.webhookEdit(t, m, b),
      },
      {
        method: 'GET',
        pattern: rx(`/webhooks/${ID}/${TOKEN}/messages/(@original|\\d+)`),
        tokenInPath: true,
        handler: ([, t, m]) => w.webhookGet(t, m),
      },
      {
        method: 'DELETE',
        pattern: rx(`/webhooks/${ID}/${TOKEN}/messages/(@original|\\d+)`),
        tokenInPath: true,
        handler: ([, t, m]) => w.webhookDelete(t, m),
      },
    ];
  }

  /** Hold the bot's requests to `method path` (path under /api/v10, e.g. `/channels/1`) until released. */
  hold(method: string, path: string): RouteHold {
    let arrived!: () => void;
    let open!: () => void;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const gate = new Promise<void>((resolve) => (open = resolve));
    const hold: Hold = {
      method,
      path,
      gate,
      reached,
      arrived,
      release: () => {
        this.holds.delete(hold);
        open();
      },
    };
    this.holds.add(hold);
    return hold;
  }

  /** Let every held request go (the fake is closing). */
  releaseAll(): void {
    for (const h of [...this.holds]) h.release();
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    const path = decodeURIComponent(url.pathname).replace(/^\/api\/v10/, '');
    let lastBody: Record<string, unknown> = {};
    try {
      if (!url.pathname.startsWith('/api/v10/')) throw notFound(0, '404: Not Found');
      const match = this.match(method, path);
      if (!match) throw notFound(0, '404: Not Found');
      if (!match.route.tokenInPath && req.headers.authorization !== `Bot ${this.token}`) {
        throw new HttpError(401, { code: 0, message: '401: Unauthorized' });
      }
      const body = method === 'GET' ? {} : await readBody(req);
      for (const h of this.holds) {
        if (h.method !== method || h.path !== path) continue;
        h.arrived();
        await h.gate;
      }
      lastBody = body;
      const limited = this.limits.check(method, path, /^\/(?:interactions|webhooks)\//.test(path));
      if (limited !== undefined) throw limited;
      const refused = method === 'GET' ? undefined : this.refuse?.(`${method} ${path}`, body);
      if (refused !== undefined) throw invalidFormBody(refused);
      const out = await match.route.handler(match.params, body, url);
      const lost = maybeLoseAnswer(this.faults, method, path, out.status, res);
      if (!lost) sendJson(res, out.status, out.body, out.headers);
      if (method !== 'GET') this.recordWrite(method, path, body, out.status, out.body, lost);
    } catch (err) {
      if (err instanceof HttpError) {
        sendJson(res, err.status, err.body, err.headers);
        if (method !== 'GET') this.recordWrite(method, path, lastBody, err.status, undefined);
        return;
      }
      sendJson(res, 500, { code: 0, message: String(err) });
    }
  }

  /** Every write the bot made, with what a test wants to assert on. */
  private recordWrite(
    method: string,
    path: string,
    body: Record<string, unknown>,
    status: number,
    out: unknown,
    lost = false,
  ): void {
    const data = (body.data as Record<string, unknown> | undefined) ?? body;
    const tokenMatch = /^\/(?:webhooks\/\d+|interactions\/\d+)\/([^/]+)/.exec(path);
    const interaction = tokenMatch?.[1] ? this.state.interactionByToken(tokenMatch[1]) : undefined;
    const channelId = /^\/channels\/(\d+)/.exec(path)?.[1] ?? interaction?.channelId;
    const outId = (out as { id?: unknown } | undefined)?.id;
    const outContent = /\/channels\/\d+\/messages$/.test(path)
      ? (out as { content?: unknown } | undefined)?.content
      : undefined;
    const messageId = typeof outId === 'string' ? outId : (/\/messages\/(\d+)$/.exec(path)?.[1] ?? undefined);
    this.state.record.push({
      method,
      path,
      channelId,
      ...(messageId === undefined ? {} : { messageId }),
      // A create a nonce answered with an earlier message shows that message's text, not the body's.
      content:
        typeof outContent === 'string' ? outContent : typeof data.content === 'string' ? data.content : undefined,
      allowed_mentions: data.allowed_mentions,
      ...(body.message_reference === undefined ? {} : { message_reference: body.message_reference }),
      ...(body.nonce === undefined ? {} : { nonce: body.nonce, enforceNonce: body.enforce_nonce }),
      ...(lost ? { lost: true as const } : {}),
      status,
      at: Date.now(),
    });
    this.state.changes.emit('write');
  }

  private match(method: string, path: string): { route: Route; params: Params } | undefined {
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const m = route.pattern.exec(path);
      if (m) return { route, params: m.slice(1).map((s) => s ?? '') };
    }
    return undefined;
  }

  private gatewayBot() {
    return {
      url: this.gatewayUrl(),
      shards: this.gatewayInfo.shards,
      session_start_limit: {
        total: 1000,
        remaining: 1000,
        reset_after: 86_400_000,
        max_concurrency: this.gatewayInfo.maxConcurrency,
      },
    };
  }

  private application() {
    return {
      id: this.state.applicationId,
      name: 'fake-app',
      description: '',
      icon: null,
      bot_public: true,
      bot_require_code_grant: false,
      // GATEWAY_MESSAGE_CONTENT_LIMITED: the privileged intent is switched on, as an operator should.
      flags: 1 << 19,
      bot: userJson(this.state.botUser),
      verify_key: '0',
    };
  }

  private channel(id: string | undefined) {
    const c = id === undefined ? undefined : this.state.channels.get(id);
    if (!c) throw notFound(10003, 'Unknown Channel');
    return channelJson(c, this.state);
  }

  /** GET /channels/{id}/messages: newest first, `limit` (1-100, default 50), `before` a message id. */
  private history(id: string | undefined, url: URL) {
    const channel = id === undefined ? undefined : this.state.channels.get(id);
    if (!channel) throw notFound(10003, 'Unknown Channel');
    const limit = Math.min(100, Math.max(1, Number(url.searchParams.get('limit') ?? 50) || 50));
    const before = url.searchParams.get('before');
    return this.state
      .channelMessages(channel.id)
      .filter((m) => !m.ephemeral && (before === null || BigInt(m.id) < BigInt(before)))
      .sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : -1))
      .slice(0, limit)
      .map((m) => {
        // Discord resolves the users a message mentions.
        const mentioned = [...m.content.matchAll(/<@!?(\d+)>/g)].flatMap((x) =>
          x[1] !== undefined && this.state.users.has(x[1]) ? [this.state.user(x[1])] : [],
        );
        return messageJson(m, this.state, mentioned);
      });
  }

  private putCommands(key: string, body: unknown): FakeCommand[] {
    const list = Array.isArray(body) ? body : Object.values(body as object);
    const cmds = (list as Record<string, unknown>[]).map((c) => ({
      ...c,
      id: this.state.nextId(),
      application_id: this.state.applicationId,
      version: this.state.nextId(),
      type: 1,
      name: String(c.name),
      ...(key === 'global' ? {} : { guild_id: key }),
    }));
    this.state.commands.set(key, cmds);
    return cmds;
  }
}

function rx(path: string): RegExp {
  return new RegExp(`^${path}$`);
}
