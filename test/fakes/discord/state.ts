import type { UploadedFile } from './attachments.js';
import { EventEmitter } from 'node:events';

// The fake Discord's world: users, guilds, channels (incl. threads and DMs), messages, and the
// record of every write the bot made. Plain data; the REST and gateway modules read and change it.

export const DISCORD_EPOCH = 1420070400000n;

/**
 * Increasing snowflakes whose timestamp part is real, so discord.js's createdAt makes sense.
 * `onShard` makes one whose guild shard (`(id >> 22) % count`) is `shard`: its timestamp is moved
 * up to `count - 1` ms ahead.
 */
export function makeSnowflakes(): (onShard?: { shard: number; count: number }) => string {
  let seq = 0n;
  return (onShard) => {
    seq = (seq + 1n) & 0xfffn;
    let ms = BigInt(Date.now()) - DISCORD_EPOCH;
    if (onShard !== undefined) {
      const count = BigInt(onShard.count);
      ms += (BigInt(onShard.shard) - (ms % count) + count) % count;
    }
    return String((ms << 22n) | (1n << 17n) | seq);
  };
}

export interface FakeUser {
  id: string;
  username: string;
  bot: boolean;
}

/** Discord channel types used here (discord-api-types ChannelType). */
export const ChannelKind = { GuildText: 0, DM: 1, PublicThread: 11 } as const;

export interface FakeChannel {
  id: string;
  type: number;
  guildId?: string;
  name?: string;
  /** For threads. */
  parentId?: string;
  ownerId?: string;
  /** Threads: archived ones are left out of GUILD_CREATE, as on Discord. */
  archived?: boolean;
  /** For DMs: the other user. */
  recipientId?: string;
}

export interface FakeGuild {
  id: string;
  name: string;
}

export interface FakeMessage {
  id: string;
  channelId: string;
  guildId?: string;
  authorId: string;
  content: string;
  allowedMentions?: unknown;
  messageReference?: unknown;
  /** Set when the message came from an interaction webhook. */
  interactionId?: string;
  ephemeral?: boolean;
  /** Buttons as last written (an edit without `components` keeps them). */
  components?: unknown[];
  /** Embeds as last written (an edit without `embeds` keeps them). */
  embeds?: unknown[];
  /** Files uploaded with the message (multipart), in order. */
  files?: UploadedFile[];
  createdAt: number;
  editedAt?: number;
  edits: number;
}

export interface WriteRecord {
  method: string;
  path: string;
  /** The channel written to; for interaction webhooks the interaction's channel. */
  channelId: string | undefined;
  messageId?: string;
  content: string | undefined;
  /** The request's `allowed_mentions` as sent (undefined when absent). */
  allowed_mentions: unknown;
  message_reference?: unknown;
  /** A create's `nonce` and `enforce_nonce` as sent (nonce.ts). */
  nonce?: unknown;
  enforceNonce?: unknown;
  /** The write took effect and its answer was lost (nonce.ts): the bot may repeat it. */
  lost?: true;
  status: number;
  at: number;
}

export interface FakeInteraction {
  id: string;
  token: string;
  channelId: string;
  guildId?: string;
  userId: string;
  /** 'pending' until the callback; then the original response's message, once it exists. */
  callbackType?: number;
  originalMessageId?: string;
  ephemeral?: boolean;
  callbackContent?: string;
}

export interface FakeCommand {
  id: string;
  name: string;
  description?: string;
  options?: unknown[];
  guildId?: string;
}

/** The messages by id, indexed by channel too (a soak of 50,000 threads reads one at a time). */
class MessagesByChannel extends Map<string, FakeMessage> {
  private readonly byChannel = new Map<string, Map<string, FakeMessage>>();

  override set(id: string, m: FakeMessage): this {
    const old = super.get(id);
    if (old !== undefined && old.channelId !== m.channelId) this.byChannel.get(old.channelId)?.delete(id);
    super.set(id, m);
    // byChannel is undefined while Map's constructor runs (it calls set for its entries).
    if (this.byChannel !== undefined) {
      let c = this.byChannel.get(m.channelId);
      if (c === undefined) this.byChannel.set(m.channelId, (c = new Map()));
      c.set(id, m);
    }
    return this;
  }

  override delete(id: string): boolean {
    const old = super.get(id);
    if (old !== undefined) this.byChannel.get(old.channelId)?.delete(id);
    return super.delete(id);
  }

  override clear(): void {
    this.byChannel.clear();
    super.clear();
  }

  /** A channel's messages in the order they were first set. */
  inChannel(channelId: string): FakeMessage[] {
    return [...(this.byChannel.get(channelId)?.values() ?? [])];
  }
}

export class FakeDiscordState {
  readonly nextId = makeSnowflakes();
  readonly users = new Map<string, FakeUser>();
  readonly guilds = new Map<string, FakeGuild>();
  readonly channels = new Map<string, FakeChannel>();
  readonly messages = new MessagesByChannel();
  readonly interactions = new Map<string, FakeInteraction>();
  /** key: guild id or 'global' */
  readonly commands = new Map<string, FakeCommand[]>();
  readonly record: WriteRecord[] = [];
  /** Channels the bot showed "is typing…" in, one entry per typing call, in order. */
  readonly typing: string[] = [];
  /** Emits 'write' after each recorded write, so tests await a condition instead of sleeping. */
  readonly changes = new EventEmitter();
  /** 429 answers the fake gave. */
  rateLimitHits = 0;

  readonly botUser: FakeUser;
  /** The bot's application; its id equals the bot user's id, as for Discord bots. */
  readonly applicationId: string;

  constructor(botName = 'bridge-bot') {
    this.botUser = { id: this.nextId(), username: botName, bot: true };
    this.applicationId = this.botUser.id;
    this.users.set(this.botUser.id, this.botUser);
  }

  user(id: string): FakeUser {
    let u = this.users.get(id);
    if (!u) {
      u = { id, username: `user${id.slice(-4)}`, bot: false };
      this.users.set(id, u);
    }
    return u;
  }

  channelMessages(channelId: string): FakeMessage[] {
    return this.messages.inChannel(channelId);
  }

  threadsOf(guildId: string): FakeChannel[] {
    return [...this.channels.values()].filter(
      (c) => c.guildId === guildId && c.type === ChannelKind.PublicThread && !c.archived,
    );
  }

  interactionByToken(token: string): FakeInteraction | undefined {
    for (const i of this.interactions.values()) if (i.token === token) return i;
    return undefined;
  }
}
