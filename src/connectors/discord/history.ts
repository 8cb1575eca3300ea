import { type Client, Routes } from 'discord.js';
import type { PlaceHistoryPage, HistoryReader, HistoryRequest, PlaceMessage } from '../../core/ports.js';
import { compareIds, type SeenMessages } from '../../core/reply/thread-context.js';
import { cutText } from '../../core/reply/upstream-message.js';
import { toPlatformError } from './errors.js';
import { CONTENT_TYPES, readableContent } from './events.js';
import { type BucketBudget, channelReadBucket } from './rate-limits.js';

// A Discord place's earlier messages, for the context of a new conversation
// (core/reply/thread-context.ts): `GET /channels/{id}/messages?limit&before`, newest first, at
// most 100 a request; a page that may have more before it says so, and the next one reads before
// its oldest message (thread-context.ts follows while fewer than asked are held). Mentions become
// display names; the bot's own messages are the assistant's.

interface ApiUser {
  id: string;
  username?: string;
  global_name?: string | null;
  bot?: boolean;
}

interface ApiMessage {
  id: string;
  type?: number;
  content?: string;
  timestamp?: string;
  author?: ApiUser;
  mentions?: ApiUser[];
}

/** Discord returns at most 100 messages a request. */
const MAX_LIMIT = 100;

export interface DiscordHistoryInit {
  client: Client;
  /** Where the place's messages are: its thread, else its channel (replyChannelId). */
  channelId: string;
  guildId: string | undefined;
  budget?: BucketBudget;
  /** The connector's record of messages the gateway delivered (events.ts); none: every read asks Discord. */
  seen?: SeenMessages<PlaceMessage>;
  /** The bot's display name for its own replies in the record. */
  botName?: string;
  now?: () => number;
}

export function discordHistoryReader(init: DiscordHistoryInit): HistoryReader {
  const bucket = channelReadBucket(init.channelId, init.budget);
  const seen = init.seen;
  return {
    buckets: [bucket],
    async recent(req: HistoryRequest): Promise<PlaceHistoryPage> {
      // Newest first from `before`; a later page continues before the oldest of the last one.
      const before = req.cursor ?? req.beforeMessageId;
      const asked = Math.min(MAX_LIMIT, Math.max(1, req.limit));
      const query = new URLSearchParams({ limit: String(asked) });
      if (before !== undefined) query.set('before', before);
      let raw: ApiMessage[];
      try {
        raw = (await init.client.rest.get(Routes.channelMessages(init.channelId), { query })) as ApiMessage[];
      } catch (err) {
        throw toPlatformError(err, bucket.key);
      }
      // Sorted all the same, newest first: nothing here trusts an order.
      const sorted = [...raw].sort((a, b) => compareIds(b.id, a.id));
      const messages = sorted
        .filter((m) => m.type === undefined || CONTENT_TYPES.has(m.type))
        .map((m) => toPlaceMessage(init, m));
      const oldest = sorted.at(-1)?.id;
      // A full page may have more before it (Discord gives 100 a request at most, or fewer when capped).
      return raw.length > 0 && oldest !== undefined && raw.length >= asked
        ? { messages, next: { cursor: oldest, direction: 'older' } }
        : { messages };
    },
    ...(seen !== undefined
      ? {
          recorded: (req: HistoryRequest) =>
            Promise.resolve(seen.before(init.channelId, req.beforeMessageId, req.limit)),
          remember: (reply: { messageId: string; text: string }) =>
            seen.add(init.channelId, reply.messageId, {
              id: reply.messageId,
              author: init.botName ?? 'assistant',
              role: 'assistant',
              text: cutText(reply.text, seen.limits.maxChars),
              ts: new Date((init.now ?? Date.now)()).toISOString(),
            }),
        }
      : {}),
  };
}

function displayName(init: DiscordHistoryInit, user: ApiUser | undefined): string {
  if (user === undefined) return 'someone';
  const member =
    init.guildId !== undefined ? init.client.guilds.cache.get(init.guildId)?.members.cache.get(user.id) : undefined;
  return member?.displayName ?? user.global_name ?? user.username ?? 'someone';
}

function toPlaceMessage(init: DiscordHistoryInit, m: ApiMessage): PlaceMessage {
  const own = m.author?.id !== undefined && m.author.id === init.client.user?.id;
  const mentioned = new Map((m.mentions ?? []).map((u) => [u.id, u]));
  const nameOf = (id: string) => {
    const user = mentioned.get(id) ?? init.client.users.cache.get(id);
    return user === undefined ? 'someone' : displayName(init, { ...user, id });
  };
  return {
    id: m.id,
    author: displayName(init, m.author),
    role: own ? 'assistant' : 'user',
    text: readableContent(m.content ?? '', nameOf, (id) => {
      const ch = init.client.channels.cache.get(id);
      return ch !== undefined && 'name' in ch && typeof ch.name === 'string' ? ch.name : 'channel';
    }),
    ts: m.timestamp ?? new Date(0).toISOString(),
  };
}
