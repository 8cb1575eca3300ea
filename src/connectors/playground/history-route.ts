import { ChatError } from '../../core/chat-port.js';
import { mergeHistory } from './history-merge.js';
import type { RoutesContext } from './routes-context.js';

// `GET /playground/api/history`: the conversation as the page shows it after a reload, the
// upstream's history merged with the turns this process kept (history-merge.ts), with this
// browser's votes on the replies.

const HISTORY_LIMIT = 100;

/**
 * The conversation as the page shows it. `gone`: the upstream no longer knows the conversation
 * (a restarted emulator, an expired session); the page says so.
 */
export async function readHistory(
  ctx: RoutesContext,
  conversation: string,
  user: string,
): Promise<Record<string, unknown>> {
  const { connector, opts } = ctx;
  const place = connector.placeOf(conversation);
  const rec = await opts.conversations.get(place);
  await connector.load(conversation);
  const asks = connector.asked(conversation);
  const views = connector.live(conversation);
  if (rec?.upstreamId === undefined) return { messages: mergeHistory(undefined, asks, views) };
  try {
    const pageOf = await opts.chat.history(rec.botId || opts.botFor(place), rec.upstreamId, { limit: HISTORY_LIMIT });
    const upstream = pageOf.messages.map((m) => ({ id: m.id, role: m.role, text: m.content }));
    const messages = mergeHistory(upstream, asks, views);
    return { messages: await withVotes(ctx, messages, rec.upstreamId, user) };
  } catch (err) {
    if (!(err instanceof ChatError) || err.kind !== 'conversation_gone') throw err;
    return { messages: mergeHistory(undefined, asks, views), gone: true };
  }
}

/** This browser's votes on the conversation's replies (`vote` on each), from the feedback store. */
async function withVotes<T extends { replyKey?: string }>(
  ctx: RoutesContext,
  messages: T[],
  upstreamId: string,
  user: string,
): Promise<(T & { vote?: string })[]> {
  const feedback = ctx.opts.feedback;
  if (feedback === undefined || !messages.some((m) => m.replyKey !== undefined)) return messages;
  const votes = new Map<string, string>();
  try {
    for (const v of await feedback.forConversation(upstreamId)) if (v.userId === user) votes.set(v.replyKey, v.vote);
  } catch (err) {
    // The thumbs then show unpressed: no reason to fail the whole history.
    ctx.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'playground: votes not read');
  }
  return messages.map((m) => {
    const vote = m.replyKey === undefined ? undefined : votes.get(m.replyKey);
    return vote === undefined ? m : { ...m, vote };
  });
}
