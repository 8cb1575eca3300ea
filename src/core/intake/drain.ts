import type { Logger } from 'pino';
import type { Clock } from '../ports.js';
import type { PlaceOrder } from './place-order.js';

// The process's shutdown (SIGTERM): no new messages; the replies in flight, and the messages
// acked before the drain began that are still on their way (PlaceOrder.arrivalsOnTheWay), get
// up to timeoutMs; what still runs then is interrupted (the shutdown signal) and gets the grace
// to write its interruption note. Not a user's Stop (live-replies.ts).

export interface DrainParts {
  order: PlaceOrder;
  /** Every handle() not settled yet. */
  pending: ReadonlySet<Promise<unknown>>;
  /** Aborted once the replies still running are to be interrupted. */
  shutdown: AbortController;
  clock: Clock;
  logger: Logger;
  graceMs: number;
}

export async function drainRelay(p: DrainParts, timeoutMs: number): Promise<void> {
  p.order.beginDrain();
  await settledAllOrTimeout([p.pending, p.order.arrivalsOnTheWay], timeoutMs, p.clock);
  if (p.pending.size === 0) return;
  p.logger.info({ replies: p.pending.size }, 'interrupting replies still running at shutdown');
  p.shutdown.abort(new Error('shutting down'));
  await settledOrTimeout(p.pending, p.graceMs, p.clock);
}

/** Resolves once every promise in `pending` (as it is now) settled, or after `ms`, whichever first. */
export function settledOrTimeout(pending: ReadonlySet<Promise<unknown>>, ms: number, clock: Clock): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = clock.setTimeout(resolve, ms);
    void Promise.allSettled([...pending]).then(() => {
      timer.clear();
      resolve();
    });
  });
}

/**
 * Resolves once every promise in `sets` has settled, including those added meanwhile, or after
 * `ms` on `clock`, whichever comes first.
 */
export async function settledAllOrTimeout(
  sets: ReadonlyArray<ReadonlySet<Promise<unknown>>>,
  ms: number,
  clock: Clock,
): Promise<void> {
  let timedOut = false;
  let wake!: () => void;
  const timeout = new Promise<void>((resolve) => (wake = resolve));
  const timer = clock.setTimeout(() => {
    timedOut = true;
    wake();
  }, ms);
  try {
    for (;;) {
      const open = sets.flatMap((s) => [...s]);
      if (timedOut || open.length === 0) return;
      await Promise.race([Promise.allSettled(open), timeout]);
    }
  } finally {
    timer.clear();
  }
}
