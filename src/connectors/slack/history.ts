import type { webApi } from '@slack/bolt';
import type { HistoryReader, HistoryRequest, PlaceMessage } from '../../core/ports.js';
import type { BotIdentity } from './events.js';
import { historyBucket, type SlackLimits, translateSlackError } from './rate-limits.js';
import type { UserNames } from './users.js';

// A Slack place's earlier messages, for the context of a new conversation (core/reply/thread-context.ts):
// `conversations.replies` for a thread, `conversations.history` for a DM or channel, one request.
// Text is made readable for the upstream: mentions become display names, links and channel
// references their labels, entities plain characters.

/** Slack pages a thread from its parent: one page this long covers all but very long threads. */
const THREAD_PAGE = 200;
/** Names looked up per read at most (users.info each, cached an hour); others read "someone". */
const MAX_NAME_LOOKUPS = 20;

interface SlackHistoryMessage {
  type?: string;
  subtype?: string;
  ts?: string;
  user?: string;
  bot_id?: string;
  username?: string;
  text?: string;
  user_profile?: { display_name?: string; real_name?: string; name?: string };
  bot_profile?: { name?: string };
}

// Subtypes that are someone writing (other subtypes: joins, topic changes, deletions...).
const CONTENT_SUBTYPES = new Set(['file_share', 'thread_broadcast', 'bot_message', 'me_message']);

export interface SlackHistoryInit {
  client: webApi.WebClient;
  teamId: string;
  channel: string;
  /** The thread's parent ts; undefined for a DM or channel read at top level. */
  threadTs: string | undefined;
  bot: BotIdentity;
  users: UserNames;
  limits: SlackLimits;
}

export function slackHistoryReader(init: SlackHistoryInit): HistoryReader {
  const bucket = historyBucket(init.limits, init.teamId);
  return {
    buckets: [bucket],
    async recent(req: HistoryRequest): Promise<PlaceMessage[]> {
      let raw: SlackHistoryMessage[];
      try {
        raw = await fetchMessages(init, req);
      } catch (err) {
        throw translateSlackError(err, bucket.key);
      }
      return toPlaceMessages(init, raw);
    },
  };
}

async function fetchMessages(init: SlackHistoryInit, req: HistoryRequest): Promise<SlackHistoryMessage[]> {
  const before = req.beforeMessageId !== undefined ? { latest: req.beforeMessageId, inclusive: false } : {};
  if (init.threadTs !== undefined) {
    const res = await init.client.conversations.replies({
      channel: init.channel,
      ts: init.threadTs,
      limit: THREAD_PAGE,
      ...before,
    });
    // Oldest first: the newest `limit` are the end of the page.
    return ((res.messages ?? []) as SlackHistoryMessage[]).slice(-req.limit).reverse();
  }
  const res = await init.client.conversations.history({ channel: init.channel, limit: req.limit, ...before });
  return (res.messages ?? []) as SlackHistoryMessage[];
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
