import { PlatformRateLimitedError, PlatformWriteError } from '../../core/ports.js';
import type { SlackDestination } from './destination.js';

// Writes that go wrong, and what the sinks do about them: nothing here runs for a reply whose
// writes Slack took. A write refused for its rich form goes again plainly (the plain fallback, plain-fallback.ts).
//
// A post whose answer is lost (a cut connection, a timeout, a 5xx after the request left) may have
// made the message. Slack has no idempotency key, so before a part is posted again the bridge
// looks for the first one: every post carries message metadata naming the reply and the part, and
// one bounded read of the thread (conversations.replies) or the channel (conversations.history),
// paid from the history bucket through the same grant as the post, finds it. A native stream's
// start takes no metadata: its message is the bot's own message in the thread that this reply
// does not know (one reply writes in a place at a time). Updates are idempotent: never looked for.

/**
 * Messages read at most when looking for a lost write (one call): 15, what conversations.replies
 * and .history give apps outside the Marketplace per call (since 2025); the search starts just
 * after the reply's last known message (`oldest`), where a lost post or stream start is.
 */
export const SEARCH_LIMIT = 15;

/** A write error after which the write may have taken effect (not a refusal, not a 429). */
export function isUncertain(err: Error): boolean {
  return !(err instanceof PlatformRateLimitedError) && err instanceof PlatformWriteError && err.retryable;
}

interface ListedMessage {
  ts?: string;
  text?: string;
  user?: string;
  bot_id?: string;
  metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
}

/**
 * The messages after `after` (exclusive) where the reply writes: its thread, or the channel's top
 * level for a top-level DM reply. One call, at most SEARCH_LIMIT messages, with metadata.
 */
async function listAfter(dest: SlackDestination, after: string | undefined): Promise<ListedMessage[]> {
  const { channelId: channel, threadId } = dest.place;
  const bounds = { limit: SEARCH_LIMIT, include_all_metadata: true, ...(after !== undefined ? { oldest: after } : {}) };
  const res =
    threadId !== undefined
      ? await dest.client.conversations.replies({ channel, ts: threadId, ...bounds })
      : await dest.client.conversations.history({ channel, ...bounds });
  return (res.messages ?? []) as ListedMessage[];
}

/**
 * The message a lost post made, if any: the one carrying the `metadata` the post carried (the
 * reply's id and the part's number, reply-sink-edit.ts replyMetadata).
 */
export async function findPosted(
  dest: SlackDestination,
  metadata: { event_type: string; event_payload: { reply: string; part: number } },
  after: string | undefined,
): Promise<string | undefined> {
  const { reply, part } = metadata.event_payload;
  const hit = (await listAfter(dest, after)).find(
    (m) =>
      m.metadata?.event_type === metadata.event_type &&
      m.metadata.event_payload?.reply === reply &&
      Number(m.metadata.event_payload.part) === part,
  );
  return hit?.ts;
}

/** The bot's message after `after` that this reply does not know: a stream start whose answer was lost. */
export async function findStarted(
  dest: SlackDestination,
  after: string | undefined,
  known: ReadonlySet<string>,
): Promise<{ ts: string; text: string | undefined } | undefined> {
  const bot = dest.bot;
  if (bot === undefined) return undefined;
  const own = (m: ListedMessage) => m.user === bot.userId || (bot.botId !== undefined && m.bot_id === bot.botId);
  const hit = (await listAfter(dest, after)).find(
    (m) => m.ts !== undefined && m.ts !== dest.place.threadId && own(m) && !known.has(m.ts),
  );
  return hit?.ts === undefined ? undefined : { ts: hit.ts, text: hit.text };
}

/** What one message of the reply's thread shows now (one read), undefined when not found. */
export async function readShown(dest: SlackDestination, ts: string): Promise<string | undefined> {
  const { channelId: channel, threadId } = dest.place;
  if (threadId === undefined) return undefined;
  const res = await dest.client.conversations.replies({
    channel,
    ts: threadId,
    oldest: ts,
    latest: ts,
    inclusive: true,
    limit: 2,
  });
  return ((res.messages ?? []) as ListedMessage[]).find((m) => m.ts === ts)?.text;
}
