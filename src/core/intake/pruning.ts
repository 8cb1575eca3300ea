import type { Logger } from 'pino';
import type { Clock, EventStore, FeedbackStore, InFlightStore } from '../ports.js';

/** Replies remembered for votes this long (their votes are kept). */
const FEEDBACK_REPLY_KEEP_MS = 90 * 24 * 3600_000;
/** Dedup is kept this long (CONTRACT: 24 hours); finished reply records a week, for diagnosis. */
const DEDUP_KEEP_MS = 24 * 3600_000;
const INFLIGHT_KEEP_MS = 7 * 24 * 3600_000;
const PRUNE_EVERY_MS = 3600_000;

export interface PrunerDeps {
  events: EventStore;
  inflight: InFlightStore;
  feedback: FeedbackStore | undefined;
  clock: Clock;
  logger: Logger;
}

/**
 * Forgets old dedup entries, finished reply records and the replies remembered for votes, at most
 * once an hour, in the background: the returned function is called on each message.
 */
export function pruner(d: PrunerDeps): (now: number) => void {
  let lastPrune = d.clock.now();
  return (now) => {
    if (now - lastPrune < PRUNE_EVERY_MS) return;
    lastPrune = now;
    void (async () => {
      const events = await d.events.prune(now - DEDUP_KEEP_MS);
      const replies = await d.inflight.prune(now - INFLIGHT_KEEP_MS);
      await d.feedback?.prune(now - FEEDBACK_REPLY_KEEP_MS);
      if (events + replies > 0) d.logger.debug({ events, replies }, 'pruned old records');
    })().catch((err: unknown) =>
      d.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'pruning old records failed'),
    );
  };
}
