import type { Place } from '../../core/ports.js';
import type { PlatformFile } from '../attachments.js';

// Which Slack events are messages for the bot, and where their conversation lives.

/** The fields of `message` / `app_mention` events this connector reads. */
export interface SlackMessageEvent {
  type: string;
  subtype?: string;
  channel?: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts?: string;
  thread_ts?: string;
  team?: string;
  /** Files shared with the message (subtype `file_share`). */
  files?: SlackFile[];
}

/** The fields of a message's file this connector reads. */
export interface SlackFile {
  id?: string;
  name?: string;
  title?: string;
  mimetype?: string;
  size?: number;
  /** `hosted`, `snippet`, `external`, `tombstone`, `hidden_by_limit`, … */
  mode?: string;
  /** Needs the bot token in the Authorization header; never given to the upstream. */
  url_private?: string;
  url_private_download?: string;
}

/** Slack's file host: the only place besides SLACK_API_URL's origin that is given the bot token. */
export const SLACK_FILE_ORIGIN = 'https://files.slack.com';

/**
 * The origins a file URL may point at to be fetched with the bot token: Slack's file host over
 * https, and the origin of SLACK_API_URL (Slack itself, or the fake Slack in tests). Scheme, host
 * and port must all match: `http://files.slack.com` or `https://files.slack.com:8443` is elsewhere.
 */
export function tokenOrigins(apiUrl: string): string[] {
  const origins = [SLACK_FILE_ORIGIN];
  try {
    const api = new URL(apiUrl).origin;
    if (api !== 'null' && !origins.includes(api)) origins.push(api);
  } catch {
    // An unparsable SLACK_API_URL is refused by the config; here it just adds nothing.
  }
  return origins;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * A Slack file as the shared downloader sees it: fetched with the bot token in a header, but only
 * from one of `origins` (tokenOrigins). A file whose URL points anywhere else is `untrusted_host`:
 * nothing is fetched, the token goes nowhere, and the user is told the file was not passed on.
 */
export function slackFile(f: SlackFile, token: string | undefined, origins: readonly string[]): PlatformFile {
  const url = f.mode === 'external' || f.mode === 'tombstone' ? undefined : (f.url_private_download ?? f.url_private);
  const base = { name: f.name ?? f.title ?? f.id ?? 'file', type: f.mimetype ?? '', size: f.size ?? 0 };
  if (url === undefined) return base;
  const origin = originOf(url);
  if (origin === undefined || !origins.includes(origin)) {
    return { ...base, untrustedHost: origin === undefined || origin === 'null' ? 'unparsable URL' : origin };
  }
  return {
    ...base,
    downloadUrl: url,
    ...(token !== undefined ? { headers: { authorization: `Bearer ${token}` } } : {}),
  };
}

export type Trigger =
  /** Addressed to the bot: a mention, answered in the mention's thread. */
  | { kind: 'mention' }
  /** A direct message. */
  | { kind: 'dm' }
  /** A message in a channel thread: for the bot only if the bot is in that thread. */
  | { kind: 'thread'; threadTs: string }
  | { kind: 'ignore'; reason: string };

// Subtypes that are still a person writing; every other subtype (edits, deletions, joins,
// bot messages) is not a new message for the bot.
const USER_SUBTYPES = new Set(['file_share', 'thread_broadcast']);

export interface BotIdentity {
  userId: string;
  botId: string | undefined;
}

export function mentions(text: string | undefined, botUserId: string): boolean {
  return text !== undefined && new RegExp(`<@${botUserId}(\\|[^>]*)?>`).test(text);
}

export function classify(ev: SlackMessageEvent, bot: BotIdentity): Trigger {
  if (!ev.channel || !ev.ts) return { kind: 'ignore', reason: 'no channel or ts' };
  if (ev.bot_id !== undefined || ev.subtype === 'bot_message') return { kind: 'ignore', reason: 'bot author' };
  if (!ev.user || ev.user === bot.userId) return { kind: 'ignore', reason: 'own or anonymous' };
  if (ev.subtype !== undefined && !USER_SUBTYPES.has(ev.subtype))
    return { kind: 'ignore', reason: `subtype ${ev.subtype}` };
  if (ev.type === 'app_mention') return { kind: 'mention' };
  if (ev.type !== 'message') return { kind: 'ignore', reason: `type ${ev.type}` };
  if (ev.channel_type === 'im') return { kind: 'dm' };
  // A mention also arrives as app_mention; both carry the same eventId and collapse.
  if (mentions(ev.text, bot.userId)) return { kind: 'mention' };
  if (ev.thread_ts && ev.thread_ts !== ev.ts) return { kind: 'thread', threadTs: ev.thread_ts };
  return { kind: 'ignore', reason: 'channel message without mention' };
}

export function placeOf(ev: SlackMessageEvent, trigger: Trigger, teamId: string): Place {
  const channelId = ev.channel ?? '';
  let threadId: string | undefined;
  if (trigger.kind === 'mention') threadId = ev.thread_ts ?? ev.ts;
  else if (trigger.kind === 'dm') threadId = ev.thread_ts;
  else if (trigger.kind === 'thread') threadId = trigger.threadTs;
  return { platform: 'slack', workspaceId: teamId, channelId, ...(threadId ? { threadId } : {}) };
}

/** The user's text without the bot's own mention. */
export function stripBotMention(text: string, botUserId: string): string {
  return text
    .replace(new RegExp(`<@${botUserId}(\\|[^>]*)?>`, 'g'), '')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}

export function allowed(teamId: string, channel: string, allowTeams: string[], allowChannels: string[]): boolean {
  if (allowTeams.length > 0 && !allowTeams.includes(teamId)) return false;
  if (allowChannels.length > 0 && !allowChannels.includes(channel)) return false;
  return true;
}
