import type { Logger } from 'pino';
import type { Clock, ConversationStore, EventStore, FeedbackStore, InFlightStore } from '../ports.js';

// What grows with use is forgotten after a while (docs/storage.md), so the database plateaus.

/** Replies remembered for votes this long (their votes are kept as long). */
const FEEDBACK_REPLY_KEEP_MS = 90 * 24 * 3600_000;
/** Dedup is kept this long (CONTRACT: 24 hours); finished reply records a week, for diagnosis. */
const DEDUP_KEEP_MS = 24 * 3600_000;
const INFLIGHT_KEEP_MS = 7 * 24 * 3600_000;
const DAY_MS = 24 * 3600_000;
/** CONVERSATION_RETENTION_DAYS' default. */
const CONVERSATION_KEEP_DAYS = 90;
const PRUNE_EVERY_MS = 3600_000;

export interface PrunerDeps {
  events: EventStore;
  inflight: InFlightStore;
  feedback?: FeedbackStore | undefined;
  conversations?: ConversationStore;
  /** Conversation mappings unused this many days are deleted (CONVERSATION_RETENTION_DAYS). */
  retentionDays?: number | undefined;
  /** The store's own forgetting beyond the core's ports (handovers, old budget lessons). */
  housekeeping?: ((now: number) => Promise<unknown>) | undefined;
  clock: Clock;
  logger: Logger;
}

/**
 * Forgets old dedup entries, finished reply records, the replies remembered for votes and their
 * votes, and conversation mappings unused past their retention: once an hour, on a timer of its
 * own (never on a message's path), in the background. Returns what cancels the timer (the drain).
 */
export function pruneHourly(d: PrunerDeps): { cancel(): void } {
  let timer = d.clock.setTimeout(function prune() {
    void pruneOnce(d, d.clock.now()).catch((err: unknown) =>
      d.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'pruning old records failed'),
    );
    timer = d.clock.setTimeout(prune, PRUNE_EVERY_MS);
  }, PRUNE_EVERY_MS);
  return { cancel: () => timer.clear() };
}

/** One pass of pruning as of `now` (the pruner's hourly run; tests call it directly). */
export async function pruneOnce(d: PrunerDeps, now: number): Promise<Record<string, number>> {
  const events = await d.events.prune(now - DEDUP_KEEP_MS);
  const replies = await d.inflight.prune(now - INFLIGHT_KEEP_MS);
  const feedback = (await d.feedback?.prune(now - FEEDBACK_REPLY_KEEP_MS)) ?? 0;
  const votes = (await d.feedback?.pruneVotes?.(now - FEEDBACK_REPLY_KEEP_MS)) ?? 0;
  const keepMs = (d.retentionDays ?? CONVERSATION_KEEP_DAYS) * DAY_MS;
  const conversations = (await d.conversations?.prune?.(now - keepMs)) ?? 0;
  await d.housekeeping?.(now);
  const counts = { events, replies, feedback, votes, conversations };
  if (Object.values(counts).some((n) => n > 0)) d.logger.debug(counts, 'pruned old records');
  return counts;
}
