import { ChannelType, type Message, MessageReferenceType, MessageType } from 'discord.js';
import type { DiscordReplyMode } from '../../config/config.js';
import type { Place, PlaceMessage } from '../../core/ports.js';
import { hasVisibleText } from '../../core/intake/admission.js';
import type { SeenMessages } from '../../core/reply/thread-context.js';
import { cutText } from '../../core/reply/upstream-message.js';
import { componentText, embedText } from './visible-parts.js';

// What the gateway delivers: which messages the bridge answers, and where (the Discord half of
// contract section 4), and the record of every message it delivered in an allowed place, read
// back as context before Discord is asked (core/reply/thread-context.ts).

export interface RouteContext {
  botId: string;
  replyMode: DiscordReplyMode;
}

/**
 * A message for the bot and where it goes: its place (a thread's place names the parent channel
 * and the thread) and its origin, where it was written. They differ only for a mention in a
 * channel in thread mode, as on Slack: the place is the thread the reply opens, the origin the
 * channel. The reply is written in `replyChannelId(place)`.
 */
export interface MessageRoute {
  place: Place;
  /** Where the message was written, for allowlists and the upstream's metadata (core/message-port.ts). */
  origin: Place;
  isDm: boolean;
  mentionsBot: boolean;
  /** The text without the bot's mention, trimmed (a forward's: marked, from its snapshot). */
  text: string;
  /** The files to read: the message's, or a forward's snapshot's. */
  attachments: Message['attachments'];
  /** A forwarded message, read from its snapshot. */
  forwarded?: true;
  replyTo?: { channelId: string; messageId: string };
  startThread?: ThreadFromMessage;
}

/** Thread mode: the thread the sink opens from the user's message before its first write. */
export interface ThreadFromMessage {
  parentId: string;
  messageId: string;
  name: string;
}

/** Owner and parent of a thread (from the cache, or fetched when the cache has a partial thread). */
export interface ThreadFacts {
  ownerId: string | null;
  parentId: string | null;
}

const ANSWERABLE_TYPES = new Set<MessageType>([MessageType.Default, MessageType.Reply]);

export function stripBotMention(content: string, botId: string): string {
  return content
    .replace(new RegExp(`<@!?${botId}>`, 'g'), ' ')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}

/** What a forwarded message says: its snapshot's visible text, marked as forwarded, and its files. */
export const FORWARDED_MARK = '[forwarded message]';

function forwardedContent(message: Message): { text: string; attachments: Message['attachments'] } | undefined {
  if (message.reference?.type !== MessageReferenceType.Forward) return undefined;
  const snapshot = message.messageSnapshots.first();
  if (snapshot === undefined) return undefined;
  // Its visible text: the content, then what its embeds and components show (a forward of a
  // bot's card or a poll of buttons has no content at all).
  const body = [
    (snapshot.content ?? '').trim(),
    ...embedText(snapshot.embeds),
    componentText(snapshot.components).join('\n'),
  ]
    .filter((part) => part !== '')
    .join('\n\n');
  const quoted = body === '' ? '' : `\n${body.replace(/^/gm, '> ')}`;
  return { text: `${FORWARDED_MARK}${quoted}`, attachments: snapshot.attachments };
}

/** A person's message of a kind the bridge answers: no bot's (its own replies included), webhook's or system message. */
export function fromAPerson(message: Message): boolean {
  return !message.author.bot && !message.system && message.webhookId === null && ANSWERABLE_TYPES.has(message.type);
}

export function routeMessage(message: Message, ctx: RouteContext, thread?: ThreadFacts): MessageRoute | undefined {
  if (!fromAPerson(message)) return undefined;
  const { botId } = ctx;
  // A forward has no content of its own: its snapshot is read. It mentions the bot when the
  // forwarding message does (the snapshot's mentions were made elsewhere, to other people).
  const forward = forwardedContent(message);
  const mentionsBot =
    message.mentions.users.has(botId) || (forward === undefined && new RegExp(`<@!?${botId}>`).test(message.content));
  const text = forward?.text ?? stripBotMention(message.content, botId);
  const attachments = forward?.attachments ?? message.attachments;
  // Whitespace, zero-width characters or the bare mention, and no file: nothing to ask (no
  // upstream call, no thread, no typing). Files are content: a file alone is a question. A
  // forward without text or files (a sticker, a poll) is not a question either.
  const visible = forward === undefined ? hasVisibleText(text) : text !== FORWARDED_MARK;
  if (!visible && attachments.size === 0) return undefined;
  const channel = message.channel;
  const base = { mentionsBot, text, attachments, ...(forward !== undefined ? { forwarded: true as const } : {}) };

  if (channel.type === ChannelType.DM) {
    const place: Place = { platform: 'discord', channelId: channel.id };
    return { ...base, place, origin: place, isDm: true };
  }

  const guildId = message.guildId ?? undefined;
  if (guildId === undefined) return undefined; // group DMs and the like: not for a bot

  if (channel.isThread()) {
    const ownerId = thread?.ownerId ?? channel.ownerId;
    const ours = ownerId === botId;
    if (!ours && !mentionsBot) return undefined;
    const parentId = thread?.parentId ?? channel.parentId ?? channel.id;
    const place: Place = { platform: 'discord', workspaceId: guildId, channelId: parentId, threadId: channel.id };
    return {
      ...base,
      place,
      origin: place,
      isDm: false,
      ...(ctx.replyMode === 'inline' && !ours ? { replyTo: { channelId: channel.id, messageId: message.id } } : {}),
    };
  }

  if (!mentionsBot || !channel.isTextBased()) return undefined;
  const written: Place = { platform: 'discord', workspaceId: guildId, channelId: channel.id };
  if (ctx.replyMode === 'inline') {
    return {
      ...base,
      place: written,
      origin: written,
      isDm: false,
      replyTo: { channelId: channel.id, messageId: message.id },
    };
  }
  // Thread mode: the thread opened from the user's message has the message's id, so the place is
  // known before the thread exists (the sink opens it on first use).
  return {
    ...base,
    place: { ...written, threadId: message.id },
    origin: written,
    isDm: false,
    startThread: {
      parentId: channel.id,
      messageId: message.id,
      name: threadName(
        forward === undefined ? text : text.slice(FORWARDED_MARK.length),
        `Conversation with ${message.author.username}`,
      ),
    },
  };
}

/** "How do I parse JSON in Go?" → a thread name of at most 100 characters, cut at a word. */
export function threadName(text: string, fallback: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length === 0) return fallback.slice(0, 100);
  if (flat.length <= 100) return flat;
  const cut = flat.slice(0, 99);
  const space = cut.lastIndexOf(' ');
  return `${(space > 40 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

// ---- the record of seen messages ----
// Every message the gateway delivers in an allowed channel, thread or DM is kept under its
// channel id, for the bot or not, already readable (display names, mentions as names) as
// history.ts reads Discord's answer; the bot's own replies are kept when they end
// (HistoryReader.remember). So context ends with the messages just before the user's even when
// a read is refused.

export type DiscordSeen = SeenMessages<PlaceMessage>;

// Default (0) and reply (19) messages are someone writing; the rest are system messages.
export const CONTENT_TYPES = new Set([0, 19]);

export interface SeenAllow {
  allowedGuilds: readonly string[];
  allowedChannels: readonly string[];
}

function allowed(message: Message, allow: SeenAllow): boolean {
  const guild = message.guildId;
  if (allow.allowedGuilds.length > 0 && (guild === null || !allow.allowedGuilds.includes(guild))) return false;
  if (allow.allowedChannels.length === 0) return true;
  const channel = message.channel;
  const parent = channel.isThread() ? channel.parentId : null;
  return (
    allow.allowedChannels.includes(message.channelId) || (parent !== null && allow.allowedChannels.includes(parent))
  );
}

/** Keeps a message the gateway delivered in the record (the bot's own are kept whole when their reply ends). */
export function recordMessage(seen: DiscordSeen, message: Message, allow: SeenAllow): void {
  if (message.system || !CONTENT_TYPES.has(message.type) || !allowed(message, allow)) return;
  // Here the bot's own messages hold the reply's first words only.
  if (message.client.user?.id === message.author.id) return;
  const names = (id: string) => {
    const member = message.mentions.members?.get(id);
    const user = message.mentions.users.get(id);
    return member?.displayName ?? user?.globalName ?? user?.username ?? 'someone';
  };
  seen.add(message.channelId, message.id, {
    id: message.id,
    author: message.member?.displayName ?? message.author.globalName ?? message.author.username,
    role: 'user',
    text: cutText(readableContent(message.content, names), seen.limits.maxChars),
    ts: new Date(message.createdTimestamp).toISOString(),
  });
}

/** Discord markup → what a person reads: `<@123>` → `@Ann`, `<#1>` → `#general`, roles, emoji. */
export function readableContent(
  content: string,
  nameOf: (userId: string) => string,
  channelName: (channelId: string) => string = () => 'channel',
): string {
  return content
    .replace(/<@!?(\d+)>/g, (_m, id: string) => `@${nameOf(id)}`)
    .replace(/<@&\d+>/g, '@role')
    .replace(/<#(\d+)>/g, (_m, id: string) => `#${channelName(id)}`)
    .replace(/<a?(:\w+:)\d+>/g, '$1');
}
