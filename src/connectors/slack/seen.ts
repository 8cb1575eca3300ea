import type { SeenMessages } from '../../core/reply/thread-context.js';
import { cutText } from '../../core/reply/upstream-message.js';
import type { SlackMessageEvent } from './events.js';

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
