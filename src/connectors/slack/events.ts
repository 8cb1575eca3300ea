import type { Place, WorkspaceRef } from '../../core/ports.js';
import type { PlatformFile } from '../attachments.js';
import type { SeenMessages } from '../../core/reply/thread-context.js';
import { cutText } from '../../core/reply/upstream-message.js';

// What a Slack event says: whether it is routable, whether it is a message for the bot, where its
// conversation lives, which teams it comes from, its files, and what it adds to the record of
// messages seen (every message event, for the bot or not).

/** An event_callback whose `event` is an object with a type; anything else is malformed. */
export function hasRoutableEvent(body: Record<string, unknown>): boolean {
  const ev = body.event;
  return (
    typeof ev === 'object' && ev !== null && !Array.isArray(ev) && typeof (ev as { type?: unknown }).type === 'string'
  );
}

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
  /** The author's team (in a shared channel, the author's own). */
  team?: string;
  /** Slack Connect: the author's team, and the team the message was sent from. */
  user_team?: string;
  source_team?: string;
  /** Files shared with the message (subtype `file_share`). */
  files?: SlackFile[];
  /** Agent messaging experience: what the user was viewing when writing to the app's DM. */
  app_context?: unknown;
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

/** The fields of an Events API body this connector reads to tell where an event comes from. */
interface EventBody {
  team_id?: unknown;
  enterprise_id?: unknown;
  is_ext_shared_channel?: unknown;
  authorizations?: unknown;
}

export interface EventTeams {
  /**
   * The team whose installation received the event (`authorizations[0].team_id`, else
   * `team_id`): the place's workspace, so BOT_ROUTES and the installation's token follow it.
   */
  teamId: string;
  /** Its Enterprise Grid org (`authorizations[0].enterprise_id`, else `enterprise_id`). */
  enterpriseId: string | undefined;
  /** Every team the event names, for SLACK_ALLOWED_TEAMS (core/intake/admission.ts). */
  workspaces: WorkspaceRef[];
}

const idOf = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * Where an event comes from, as the event says (never the token's own team from auth.test, which
 * is only the fallback for a body that names none). Besides the receiving team, the allowlist
 * sees the team the event was sent from (`team_id`) and the author's own team (`user_team`,
 * `source_team`, `team`): in a Slack Connect channel an outside author's team must itself be
 * allowed. Inside one Enterprise Grid org (a channel not shared outside it) every team carries
 * the org's id, so listing the org admits them all (org-wide installs).
 */
export function eventTeams(
  body: unknown,
  ev: SlackMessageEvent,
  fallback: { teamId?: string | undefined; enterpriseId?: string | undefined },
): EventTeams {
  const b: EventBody = typeof body === 'object' && body !== null ? body : {};
  const auths = Array.isArray(b.authorizations) ? (b.authorizations as unknown[]) : [];
  const auth = (typeof auths[0] === 'object' && auths[0] !== null ? auths[0] : {}) as Record<string, unknown>;
  const teamId = idOf(auth.team_id) ?? idOf(b.team_id) ?? fallback.teamId ?? '';
  const enterpriseId = idOf(auth.enterprise_id) ?? idOf(b.enterprise_id) ?? fallback.enterpriseId;
  const workspaces: WorkspaceRef[] = [];
  const add = (id: string | undefined, inOrg: boolean) => {
    if (id === undefined || workspaces.some((w) => w.id === id)) return;
    workspaces.push(inOrg && enterpriseId !== undefined ? { id, organizationId: enterpriseId } : { id });
  };
  add(idOf(teamId), true);
  const inOrg = b.is_ext_shared_channel !== true;
  for (const other of [b.team_id, ev.user_team, ev.source_team, ev.team]) add(idOf(other), inOrg);
  return { teamId, enterpriseId, workspaces };
}

// The Slack side of the record of seen messages (core/reply/thread-context.ts): every message
// event of an allowed channel is kept as Slack's history would return it, under its thread (or
// the channel's top level), whether or not it is for the bot; edits and deletions follow. The
// history reader (history.ts) reads it back before it asks Slack, so context ends with the
// messages just before the user's even when conversations.replies is capped or refused.

/** A message as conversations.replies/.history returns it: the fields the history reader reads. */
export interface SlackHistoryMessage {
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

export type SlackSeen = SeenMessages<SlackHistoryMessage>;

/** Subtypes that are someone writing (other subtypes: joins, topic changes, deletions...). */
export const CONTENT_SUBTYPES = new Set(['file_share', 'thread_broadcast', 'bot_message', 'me_message']);

/** The record's key of a thread (its parent's ts) or of a channel's top level (`undefined`). */
export function seenKey(team: string, channel: string, threadTs: string | undefined): string {
  return `${team}:${channel}:${threadTs ?? ''}`;
}

interface ChangedEvent {
  message?: { ts?: string; thread_ts?: string; text?: string };
  deleted_ts?: string;
  previous_message?: { thread_ts?: string };
}

/** Keeps what a message event says (a new message, an edit, a deletion) in the record. */
export function recordEvent(seen: SlackSeen, team: string, ev: SlackMessageEvent): void {
  const channel = ev.channel;
  if (channel === undefined) return;
  const changed = ev as SlackMessageEvent & ChangedEvent;
  if (ev.subtype === 'message_changed') {
    const m = changed.message;
    if (m?.ts === undefined) return;
    const key = seenKey(team, channel, m.thread_ts !== m.ts ? m.thread_ts : undefined);
    const text = cutText(m.text ?? '', seen.limits.maxChars);
    seen.update(key, m.ts, (old) => ({ ...old, text }));
    return;
  }
  if (ev.subtype === 'message_deleted') {
    const thread = changed.previous_message?.thread_ts;
    if (changed.deleted_ts === undefined) return;
    seen.remove(seenKey(team, channel, thread !== changed.deleted_ts ? thread : undefined), changed.deleted_ts);
    return;
  }
  if (ev.ts === undefined || (ev.subtype !== undefined && !CONTENT_SUBTYPES.has(ev.subtype))) return;
  const thread = ev.thread_ts !== undefined && ev.thread_ts !== ev.ts ? ev.thread_ts : undefined;
  const profile = (ev as { bot_profile?: { name?: string } }).bot_profile;
  seen.add(seenKey(team, channel, thread), ev.ts, {
    type: 'message',
    ts: ev.ts,
    ...(ev.subtype !== undefined ? { subtype: ev.subtype } : {}),
    ...(ev.user !== undefined ? { user: ev.user } : {}),
    ...(ev.bot_id !== undefined ? { bot_id: ev.bot_id } : {}),
    ...((ev as { username?: string }).username !== undefined
      ? { username: (ev as { username?: string }).username }
      : {}),
    ...(profile?.name !== undefined ? { bot_profile: { name: profile.name } } : {}),
    text: cutText(ev.text ?? '', seen.limits.maxChars),
  });
}
