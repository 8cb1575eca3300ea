import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FakeAttachmentInput, FakeCdn } from './cdn.js';
import { FakeGateway } from './gateway.js';
import { channelJson, guildJson, memberJson, messageJson, userJson } from './payloads.js';
import { type BucketConfig, FakeRateLimiter } from './rate-limit.js';
import { FakeRest, type RouteHold } from './rest.js';
import type { DiscordRefusal } from './refusals.js';
import { type FaultSource, faultSourceFor } from '../chaos.js';
import { discordChaosRefusal } from '../chaos-refusals.js';
import { ChannelKind, FakeDiscordState, type FakeMessage, type FakeUser, type WriteRecord } from './state.js';

// A loopback Discord that the real discord.js 14 logs into: REST under /api/v10 and a JSON
// gateway on the same port. Tests drive it (users write messages, run commands, the gateway
// drops) and assert on what users would see: the messages' current content.

export type { CdnDownload, FakeAttachmentInput } from './cdn.js';
export type { IdentifyLimit, ShardHold } from './gateway.js';
export type { RouteHold } from './rest.js';
export { type ShardPair, shardOf } from './shards.js';
export type { FakeMessage, FakeUser, WriteRecord } from './state.js';
export { FakeDiscordState } from './state.js';

export interface FakeDiscordOptions {
  token?: string;
  /** Per-channel bucket for create+edit message (and per interaction webhook). Default 5 per 5000 ms. */
  rateLimit?: BucketConfig;
  heartbeatIntervalMs?: number;
  /** GET /gateway/bot's recommended `shards` (default 1). */
  recommendedShards?: number;
  /** GET /gateway/bot's `max_concurrency` (default 1: discord.js identifies shards 5 s apart). */
  maxConcurrency?: number;
  /**
   * Enforce Discord's identify spacing: IDENTIFYs of one bucket (shard id % maxConcurrency) at
   * least this far apart (Discord: 5000), a faster one gets op 9. Off by default.
   */
  identifyWindowMs?: number;
  /** Refuses message writes for their form (refusals.ts); `fake.setRefusal` changes it later. */
  refuse?: DiscordRefusal;
  /**
   * Lost answers (nonce.ts): this source, none (`false`: a test that counts writes exactly), or
   * by default the chaos run's (`CHAOS=1`, test/fakes/chaos.ts).
   */
  chaos?: FaultSource | false;
}

export interface DispatchMessageInput {
  channelId: string;
  authorId: string;
  content: string;
  /** Adds the bot to `mentions` (put `<@botId>` in the content yourself, as a client would). */
  mentionsBot?: boolean;
  authorIsBot?: boolean;
  /** Message type; 0 = default. Anything else but 19 (reply) is a system message. */
  type?: number;
  /** Files on the message, served at their CDN `url` by the fake (no token needed, like Discord's CDN). */
  attachments?: FakeAttachmentInput[];
  /**
   * A forward (message_reference.type 1): the message has no content of its own (leave `content`
   * empty) and carries this snapshot of the forwarded message, written elsewhere.
   */
  forwarded?: {
    content: string;
    attachments?: FakeAttachmentInput[];
    fromChannelId?: string;
    /** Embeds and components of the forwarded message, as the API writes them. */
    embeds?: Record<string, unknown>[];
    components?: Record<string, unknown>[];
  };
}

export interface DispatchInteractionInput {
  channelId: string;
  userId: string;
  name: string;
  options?: { name: string; type: number; value: string | number | boolean }[];
}

export interface DispatchButtonInput {
  channelId: string;
  userId: string;
  customId: string;
  /** The bot's message carrying the button (default: a made-up message in no channel's list). */
  messageId?: string | undefined;
}

export interface ShownMessage {
  id: string;
  authorId: string;
  content: string;
  edits: number;
  allowedMentions: unknown;
  messageReference: unknown;
  interactionId?: string;
  ephemeral?: boolean;
  /** The message's buttons as last written. */
  components: unknown[];
  /** The message's embeds as last written. */
  embeds: unknown[];
  /** Files uploaded with the message (multipart attachments). */
  files: { filename: string; bytes: number[] }[];
}

export async function startFakeDiscord(opts: FakeDiscordOptions = {}) {
  // Shaped like Discord's (three base64url parts joined by dots), so config checks take it as one.
  const token = opts.token ?? `ZmFrZQ.${randomBytes(4).toString('base64url')}.${randomBytes(12).toString('base64url')}`;
  const state = new FakeDiscordState();
  const botUser: FakeUser = state.botUser;

  const limiter = new FakeRateLimiter(opts.rateLimit ?? { limit: 5, windowMs: 5000 });
  let base = '';
  const gatewayUrl = () => `ws://${base}/gateway`;
  const gateway = new FakeGateway(
    state,
    token,
    gatewayUrl,
    opts.heartbeatIntervalMs ?? 30_000,
    opts.identifyWindowMs === undefined
      ? undefined
      : { maxConcurrency: opts.maxConcurrency ?? 1, windowMs: opts.identifyWindowMs },
  );
  const rest = new FakeRest(state, token, limiter, gateway, gatewayUrl, {
    shards: opts.recommendedShards ?? 1,
    maxConcurrency: opts.maxConcurrency ?? 1,
  });
  rest.faults = faultSourceFor(opts.chaos);

  // A test's own refusal, or the chaos run's (a few rich writes refused, chaos-refusals.ts).
  rest.refuse = opts.refuse ?? (opts.chaos === false ? undefined : discordChaosRefusal(rest.faults));
  const cdn = new FakeCdn(() => base);
  const server = createServer((req, res) => {
    if (cdn.serve(req, res)) return;
    void rest.handle(req, res);
  });
  server.on('upgrade', (req, socket, head) => {
    if ((req.url ?? '').startsWith('/gateway')) gateway.handleUpgrade(req, socket, head);
    else socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `127.0.0.1:${(server.address() as AddressInfo).port}`;

  const mustChannel = (id: string) => {
    const c = state.channels.get(id);
    if (!c) throw new Error(`fake discord: unknown channel ${id}`);
    return c;
  };

  /** INTERACTION_CREATE with what every interaction type has, plus `specific` (type, data, ...). */
  const dispatchAnyInteraction = (channelId: string, userId: string, specific: Record<string, unknown>) => {
    const channel = mustChannel(channelId);
    const user = state.user(userId);
    const id = state.nextId();
    const itoken = `itok-${randomBytes(16).toString('hex')}`;
    const guildId = channel.guildId;
    state.interactions.set(id, {
      id,
      token: itoken,
      channelId: channel.id,
      ...(guildId === undefined ? {} : { guildId }),
      userId: user.id,
    });
    gateway.dispatch('INTERACTION_CREATE', {
      id,
      application_id: state.applicationId,
      token: itoken,
      version: 1,
      ...specific,
      channel_id: channel.id,
      channel: channelJson(channel, state),
      ...(guildId === undefined
        ? { user: userJson(user), context: 1 }
        : { guild_id: guildId, member: { ...memberJson(user), permissions: '2248473465835073' }, context: 0 }),
      app_permissions: '2248473465835073',
      locale: 'en-US',
      entitlements: [],
      authorizing_integration_owners: {},
      attachment_size_limit: 10_485_760,
    });
    return { id, token: itoken };
  };

  const fake = {
    apiUrl: `http://${base}/api`,
    gatewayUrl: gatewayUrl(),
    token,
    botUser,
    applicationId: botUser.id,
    state,
    gateway,
    /** Global and shared-scope 429s on demand (platform-limits.ts). */
    limits: rest.limits,
    /** Refuses message writes for their form from now on (refusals.ts); undefined: none. */
    setRefusal(refuse: DiscordRefusal | undefined): void {
      rest.refuse = refuse;
    },
    /** Lose answers of writes from now on (undefined: answer every write). */
    setFaults(faults: FaultSource | undefined): void {
      rest.faults = faults;
    },
    get record(): WriteRecord[] {
      return state.record;
    },
    get rateLimitHits(): number {
      return state.rateLimitHits;
    },
    /** Requests for attachments' CDN URLs, in order. */
    cdnDownloads: cdn.downloads,

    /** A guild; `onShard` picks its id so that it belongs to that shard of `count`. */
    addGuild(name = 'guild', onShard?: { shard: number; count: number }): string {
      const id = state.nextId(onShard);
      state.guilds.set(id, { id, name });
      if (gateway.hasSession) gateway.dispatch('GUILD_CREATE', guildJson(id, state));
      return id;
    },
    addChannel(guildId: string, name = 'general'): string {
      const id = state.nextId();
      state.channels.set(id, { id, type: ChannelKind.GuildText, guildId, name });
      if (gateway.hasSession) gateway.dispatch('CHANNEL_CREATE', channelJson(mustChannel(id), state));
      return id;
    },
    /** A thread someone (by default a user, not the bot) opened. */
    addThread(parentId: string, ownerId: string, name = 'a thread'): string {
      const parent = mustChannel(parentId);
      const id = state.nextId();
      state.channels.set(id, {
        id,
        type: ChannelKind.PublicThread,
        ...(parent.guildId === undefined ? {} : { guildId: parent.guildId }),
        name,
        parentId,
        ownerId,
      });
      if (gateway.hasSession)
        gateway.dispatch('THREAD_CREATE', { ...channelJson(mustChannel(id), state), newly_created: true });
      return id;
    },
    /** Archive a thread: the next identify leaves it out of GUILD_CREATE. */
    archiveThread(threadId: string): void {
      mustChannel(threadId).archived = true;
    },
    /** The DM channel between the bot and a user (Discord sends no event for it). */
    addDm(userId: string): string {
      const id = state.nextId();
      state.user(userId);
      state.channels.set(id, { id, type: ChannelKind.DM, recipientId: userId });
      return id;
    },

    /** A user writes a message; the bot gets MESSAGE_CREATE. Returns the wire payload (for redispatch). */
    dispatchMessage(input: DispatchMessageInput): Record<string, unknown> {
      const channel = mustChannel(input.channelId);
      // Writing in an archived thread unarchives it (the fake sends no THREAD_UPDATE for it).
      channel.archived = false;
      const author = state.user(input.authorId);
      if (input.authorIsBot) author.bot = true;
      const m: FakeMessage = {
        id: state.nextId(),
        channelId: channel.id,
        ...(channel.guildId === undefined ? {} : { guildId: channel.guildId }),
        authorId: author.id,
        content: input.content,
        createdAt: Date.now(),
        edits: 0,
      };
      state.messages.set(m.id, m);
      const json = messageJson(m, state, input.mentionsBot ? [botUser] : []);
      if (input.type !== undefined) json.type = input.type;
      json.attachments = (input.attachments ?? []).map((a) => cdn.attach(channel.id, state.nextId(), a));
      if (input.forwarded !== undefined) {
        const from = input.forwarded.fromChannelId ?? channel.id;
        const originalId = state.nextId();
        json.message_reference = {
          type: 1,
          channel_id: from,
          message_id: originalId,
          ...(channel.guildId === undefined ? {} : { guild_id: channel.guildId }),
        };
        json.message_snapshots = [
          {
            message: {
              type: 0,
              content: input.forwarded.content,
              embeds: input.forwarded.embeds ?? [],
              components: input.forwarded.components ?? [],
              attachments: (input.forwarded.attachments ?? []).map((a) => cdn.attach(from, state.nextId(), a)),
              timestamp: new Date().toISOString(),
              edited_timestamp: null,
              flags: 0,
              mentions: [],
              mention_roles: [],
            },
          },
        ];
      }
      gateway.dispatch('MESSAGE_CREATE', json);
      return json;
    },
    /** A message written before the test (no gateway event): a user's, or the bot's (`authorId` = botUser.id). */
    seedMessage(channelId: string, authorId: string, content: string): string {
      const channel = mustChannel(channelId);
      const author = state.user(authorId);
      const m: FakeMessage = {
        id: state.nextId(),
        channelId: channel.id,
        ...(channel.guildId === undefined ? {} : { guildId: channel.guildId }),
        authorId: author.id,
        content,
        createdAt: Date.now(),
        edits: 0,
      };
      state.messages.set(m.id, m);
      return m.id;
    },
    /** Send a payload again, as a gateway replay would. */
    redispatch(t: string, d: Record<string, unknown>): void {
      gateway.dispatch(t, d);
    },

    /** A user runs a slash command; returns the interaction id. */
    dispatchInteraction(input: DispatchInteractionInput): { id: string; token: string } {
      const cmd = [...state.commands.values()].flat().find((c) => c.name === input.name);
      return dispatchAnyInteraction(input.channelId, input.userId, {
        type: 2,
        data: { id: cmd?.id ?? state.nextId(), name: input.name, type: 1, options: input.options ?? [] },
      });
    },

    /** A user clicks a button (custom id `customId`) on a message of the bot's; returns the interaction id. */
    dispatchButton(input: DispatchButtonInput): { id: string; token: string } {
      const channel = mustChannel(input.channelId);
      const real = input.messageId === undefined ? undefined : state.messages.get(input.messageId);
      if (real !== undefined) {
        return dispatchAnyInteraction(input.channelId, input.userId, {
          type: 3,
          data: { custom_id: input.customId, component_type: 2 },
          message: messageJson(real, state),
        });
      }
      // The message carrying the button; not stored, so it shows up in no channel's messages.
      const carrier: FakeMessage = {
        id: state.nextId(),
        channelId: channel.id,
        ...(channel.guildId === undefined ? {} : { guildId: channel.guildId }),
        authorId: botUser.id,
        content: 'a message with a button',
        createdAt: Date.now(),
        edits: 0,
      };
      const button = { type: 2, style: 2, label: 'button', custom_id: input.customId };
      return dispatchAnyInteraction(input.channelId, input.userId, {
        type: 3,
        data: { custom_id: input.customId, component_type: 2 },
        message: { ...messageJson(carrier, state), components: [{ type: 1, components: [button] }] },
      });
    },

    /** Resolves once a bot is logged in on the gateway (at once if it already is). */
    async whenConnected(timeoutMs = 15_000): Promise<void> {
      if (gateway.connected) return;
      await new Promise<void>((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          gateway.events.off('identified', done);
          gateway.events.off('resumed', done);
          resolve();
        };
        const timer = setTimeout(() => {
          gateway.events.off('identified', done);
          gateway.events.off('resumed', done);
          reject(new Error(`fake discord: no bot connected within ${timeoutMs} ms`));
        }, timeoutMs);
        gateway.events.on('identified', done);
        gateway.events.on('resumed', done);
      });
    },

    /**
     * Make the bot's requests to one REST route wait (a slow Discord for that route only), e.g.
     * `holdRoute('GET', `/channels/${threadId}`)`. `reached` resolves when one is waiting.
     */
    holdRoute(method: string, path: string): RouteHold {
      return rest.hold(method, path);
    },

    /** Drop the gateway connection of every shard, or of shard `shardId` only. */
    disconnectGateway(code = 4000, shardId?: number): void {
      gateway.disconnect(code, shardId);
    },

    /** The messages of a channel as users see them now, oldest first. */
    messages(channelId: string): ShownMessage[] {
      return state.channelMessages(channelId).map((m) => ({
        id: m.id,
        authorId: m.authorId,
        content: m.content,
        edits: m.edits,
        allowedMentions: m.allowedMentions,
        messageReference: m.messageReference,
        ...(m.interactionId === undefined ? {} : { interactionId: m.interactionId }),
        ...(m.ephemeral === undefined ? {} : { ephemeral: m.ephemeral }),
        components: m.components ?? [],
        embeds: m.embeds ?? [],
        files: (m.files ?? []).map((f) => ({ filename: f.filename, bytes: [...f.data] })),
      }));
    },
    botMessages(channelId: string): ShownMessage[] {
      return fake.messages(channelId).filter((m) => m.authorId === botUser.id);
    },

    /** Resolve when `cond()` holds, re-checked after every write the bot makes; bounded by `timeoutMs`. */
    waitUntil<T>(cond: () => T | undefined | false, timeoutMs = 15_000, what = 'condition'): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const check = () => {
          const v = cond();
          if (v !== undefined && v !== false) {
            cleanup();
            resolve(v);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`fake discord: timed out after ${timeoutMs} ms waiting for ${what}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          state.changes.off('write', check);
        };
        state.changes.on('write', check);
        check();
      });
    },

    async close(): Promise<void> {
      rest.releaseAll();
      await gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  return fake;
}

export type FakeDiscord = Awaited<ReturnType<typeof startFakeDiscord>>;
