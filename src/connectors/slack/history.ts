import type { webApi } from '@slack/bolt';
import type { PlaceHistoryPage, HistoryReader, HistoryRequest, PlaceMessage } from '../../core/ports.js';
import { compareIds } from '../../core/reply/thread-context.js';
import { cutText } from '../../core/reply/upstream-message.js';
import { type BotIdentity, CONTENT_SUBTYPES, type SlackHistoryMessage, type SlackSeen, seenKey } from './events.js';
import { historyBucket, type SlackLimits, translateSlackError } from './rate-limits.js';

// A Slack place's earlier messages, for the context of a new conversation (core/reply/thread-context.ts):
// `conversations.replies` for a thread, `conversations.history` for a DM or channel, bounded by
// `latest` (the user's message, exclusive). Slack pages a thread from its parent, oldest first,
// and may cap a call (15 messages and one call a minute for commercial apps outside the
// Marketplace): a page that holds the parent and has more continues toward the newest end, any
// other page (conversations.history is newest first) toward the oldest. The record of messages
// seen in events (events.ts recordEvent) is read first and costs no call. Text is made readable for the
// upstream: mentions become display names, links and channel references their labels, entities
// plain characters.

/** Slack pages a thread from its parent: one page this long covers all but very long threads. */
const THREAD_PAGE = 200;
/** Names looked up per read at most (users.info each, cached an hour); others read "someone". */
const MAX_NAME_LOOKUPS = 20;

export interface SlackHistoryInit {
  client: webApi.WebClient;
  teamId: string;
  channel: string;
  /** The thread's parent ts; undefined for a DM or channel read at top level. */
  threadTs: string | undefined;
  bot: BotIdentity;
  /** The intake's cache of display names (intake.ts UserNames). */
  users: { name(client: webApi.WebClient, team: string, userId: string): Promise<string | undefined> };
  limits: SlackLimits;
  /** The connector's record of messages seen in events (none: every read asks Slack). */
  seen?: SlackSeen;
}

export function slackHistoryReader(init: SlackHistoryInit): HistoryReader {
  const bucket = historyBucket(init.limits, init.teamId);
  const seen = init.seen;
  return {
    buckets: [bucket],
    async recent(req: HistoryRequest): Promise<PlaceHistoryPage> {
      let page: RawPage;
      try {
        page = await fetchPage(init, req);
      } catch (err) {
        throw translateSlackError(err, bucket.key);
      }
      const messages = await toPlaceMessages(init, page.messages);
      return page.next !== undefined ? { messages, next: page.next } : { messages };
    },
    ...(seen !== undefined
      ? {
          recorded: (req: HistoryRequest) => toPlaceMessages(init, recordedRaw(init, seen, req)),
          remember: (reply: { messageId: string; text: string }) => {
            seen.add(seenKey(init.teamId, init.channel, init.threadTs), reply.messageId, {
              type: 'message',
              ts: reply.messageId,
              user: init.bot.userId,
              ...(init.bot.botId !== undefined ? { bot_id: init.bot.botId } : {}),
              text: cutText(reply.text, seen.limits.maxChars),
            });
          },
        }
      : {}),
  };
}

/** The record's messages of the place before the user's, newest first; a thread's parent too. */
function recordedRaw(init: SlackHistoryInit, seen: SlackSeen, req: HistoryRequest): SlackHistoryMessage[] {
  const key = seenKey(init.teamId, init.channel, init.threadTs);
  const raw = seen.before(key, req.beforeMessageId, req.limit);
  if (init.threadTs === undefined || raw.length >= req.limit) return raw;
  const parent = seen.get(seenKey(init.teamId, init.channel, undefined), init.threadTs);
  const before = req.beforeMessageId;
  return parent !== undefined && (before === undefined || compareIds(init.threadTs, before) < 0)
    ? [...raw, parent]
    : raw;
}

interface RawPage {
  /** Newest first. */
  messages: SlackHistoryMessage[];
  next?: PlaceHistoryPage['next'];
}

/** A cursor this reader hands out: the direction it continues in, then Slack's cursor. */
function packCursor(direction: 'newer' | 'older', cursor: string): NonNullable<PlaceHistoryPage['next']> {
  return { cursor: `${direction === 'newer' ? 'n' : 'o'}:${cursor}`, direction };
}

function unpackCursor(packed: string | undefined): { direction?: 'newer' | 'older'; cursor?: string } {
  if (packed === undefined) return {};
  return { direction: packed.startsWith('n:') ? 'newer' : 'older', cursor: packed.slice(2) };
}

async function fetchPage(init: SlackHistoryInit, req: HistoryRequest): Promise<RawPage> {
  const before = req.beforeMessageId !== undefined ? { latest: req.beforeMessageId, inclusive: false } : {};
  const packed = unpackCursor(req.cursor);
  const cursor = packed.cursor !== undefined ? { cursor: packed.cursor } : {};
  if (init.threadTs !== undefined) {
    const res = await init.client.conversations.replies({
      channel: init.channel,
      ts: init.threadTs,
      limit: THREAD_PAGE,
      ...before,
      ...cursor,
    });
    // Oldest first: the newest `limit` are the end of the page.
    const raw = (res.messages ?? []) as SlackHistoryMessage[];
    const newestFirst = [...raw].sort((a, b) => compareIds(b.ts ?? '0', a.ts ?? '0')).slice(0, req.limit);
    const nextCursor = res.has_more === true ? res.response_metadata?.next_cursor : undefined;
    if (nextCursor === undefined || nextCursor === '') return { messages: newestFirst };
    // A page that starts at the parent came from the old end: what is left is newer.
    const direction = packed.direction ?? (raw.some((m) => m.ts === init.threadTs) ? 'newer' : 'older');
    return { messages: newestFirst, next: packCursor(direction, nextCursor) };
  }
  const res = await init.client.conversations.history({
    channel: init.channel,
    limit: req.limit,
    ...before,
    ...cursor,
  });
  // Newest first, as Slack documents it (sorted all the same: nothing here trusts an order).
  const messages = [...((res.messages ?? []) as SlackHistoryMessage[])]
    .sort((a, b) => compareIds(b.ts ?? '0', a.ts ?? '0'))
    .slice(0, req.limit);
  const nextCursor = res.has_more === true ? res.response_metadata?.next_cursor : undefined;
  return nextCursor !== undefined && nextCursor !== ''
    ? { messages, next: packCursor('older', nextCursor) }
    : { messages };
}

function isOwn(m: SlackHistoryMessage, bot: BotIdentity): boolean {
  return m.user === bot.userId || (bot.botId !== undefined && m.bot_id === bot.botId);
}

async function toPlaceMessages(init: SlackHistoryInit, raw: SlackHistoryMessage[]): Promise<PlaceMessage[]> {
  const kept = raw.filter(
    (m) => typeof m.ts === 'string' && (m.subtype === undefined || CONTENT_SUBTYPES.has(m.subtype)),
  );
  const names = await resolveNames(init, kept);
  const nameOf = (id: string) => names.get(id) ?? 'someone';
  return kept.map((m) => {
    const own = isOwn(m, init.bot);
    const author =
      m.user !== undefined && (own || m.bot_id === undefined)
        ? nameOf(m.user)
        : (m.username ?? m.bot_profile?.name ?? 'a bot');
    return {
      id: m.ts as string,
      author,
      role: own ? 'assistant' : 'user',
      text: readableText(m.text ?? '', nameOf),
      ts: new Date(Number(m.ts) * 1000).toISOString(),
    };
  });
}

const USER_MENTION = /<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g;

/** Display names of the authors and the mentioned users: from the messages, the cache, users.info. */
async function resolveNames(init: SlackHistoryInit, messages: SlackHistoryMessage[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const wanted = new Set<string>();
  for (const m of messages) {
    const p = m.user_profile;
    const fromProfile = p?.display_name || p?.real_name || p?.name;
    if (m.user !== undefined) {
      if (fromProfile) names.set(m.user, fromProfile);
      else wanted.add(m.user);
    }
    for (const match of (m.text ?? '').matchAll(USER_MENTION)) if (match[1] !== undefined) wanted.add(match[1]);
  }
  const lookups = [...wanted].filter((id) => !names.has(id)).slice(0, MAX_NAME_LOOKUPS);
  await Promise.all(
    lookups.map(async (id) => {
      const name = await init.users.name(init.client, init.teamId, id);
      if (name !== undefined) names.set(id, name);
    }),
  );
  return names;
}

/** Slack mrkdwn → what a person reads: `<@U1>` → `@Ann`, `<#C1|general>` → `#general`, links, entities. */
export function readableText(text: string, nameOf: (userId: string) => string): string {
  return text
    .replace(USER_MENTION, (_m, id: string) => `@${nameOf(id)}`)
    .replace(/<#[A-Z0-9]+\|([^>]*)>/g, '#$1')
    .replace(/<#[A-Z0-9]+>/g, '#channel')
    .replace(/<!subteam\^[A-Z0-9]+(?:\|([^>]*))?>/g, (_m, label?: string) => label ?? '@group')
    .replace(/<!(here|channel|everyone)(?:\|[^>]*)?>/g, '@$1')
    .replace(/<![^>|]*\|([^>]*)>/g, '$1')
    .replace(/<((?:https?:\/\/|mailto:)[^>|]+)\|([^>]*)>/g, '$2 ($1)')
    .replace(/<((?:https?:\/\/|mailto:)[^>|]+)>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
