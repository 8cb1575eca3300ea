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

/** A Slack file as the shared downloader sees it: fetched with the bot token in a header. */
export function slackFile(f: SlackFile, token: string | undefined): PlatformFile {
  const url = f.mode === 'external' || f.mode === 'tombstone' ? undefined : (f.url_private_download ?? f.url_private);
  return {
    name: f.name ?? f.title ?? f.id ?? 'file',
    type: f.mimetype ?? '',
    size: f.size ?? 0,
    ...(url !== undefined ? { downloadUrl: url } : {}),
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
