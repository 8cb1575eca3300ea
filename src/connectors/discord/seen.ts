import type { Message } from 'discord.js';
import type { PlaceMessage } from '../../core/ports.js';
import type { SeenMessages } from '../../core/reply/thread-context.js';
import { cutText } from '../../core/reply/upstream-message.js';
import { readableContent } from './history.js';

// The Discord side of the record of seen messages (core/reply/thread-context.ts): every message
// the gateway delivers in an allowed channel, thread or DM is kept under its channel id, for the
// bot or not (the bot's own replies when they end), already readable (display names, mentions as names), as history.ts would read it.
// The history reader reads it back before it asks Discord, so context ends with the messages
// just before the user's even when a read is refused.

export type DiscordSeen = SeenMessages<PlaceMessage>;

// Default (0) and reply (19) messages are someone writing; the rest are system messages.
const CONTENT_TYPES = new Set([0, 19]);

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

/** Keeps a message the gateway delivered in the record (the bot's own included: they are the assistant's). */
export function recordMessage(seen: DiscordSeen, message: Message, allow: SeenAllow): void {
  if (message.system || !CONTENT_TYPES.has(message.type) || !allowed(message, allow)) return;
  // The bot's own messages are recorded when their reply ends (HistoryReader.remember), whole:
  // here they hold the reply's first words only.
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
