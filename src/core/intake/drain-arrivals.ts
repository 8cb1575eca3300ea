import type { Arrival, Clock } from '../ports.js';

// SIGTERM and the messages already on their way. A connector that joins the place's line on
// arrival (Slack: the ordered ack leaves once the message is in its line) may have acked an
// event whose message reaches handle() only after the drain began (it still waited for its
// thread membership, its user's name or its files). Acked means it must be answered: such a
// message is admitted during the drain, and the drain waits for it to reach handle(). What
// arrives after the drain began is refused as before (and Slack's HTTP receiver no longer acks it).

export interface DrainArrivals {
  /** Notes an arrival; before the drain began, it is answered even during the drain. */
  note(arrival: Arrival): Arrival;
  /** handle() got the message of this arrival. */
  handed(arrival: Arrival | undefined): void;
  /** The message arrived before the drain began. */
  admitted(arrival: Arrival | undefined): boolean;
  /** The drain begins: later arrivals are not admitted. */
  begin(): void;
  /** Arrivals from before the drain that have not reached handle() (nor been left) yet. */
  readonly waiting: ReadonlySet<Promise<void>>;
}

export function drainArrivals(): DrainArrivals {
  const early = new WeakMap<Arrival, () => void>();
  const waiting = new Set<Promise<void>>();
  let draining = false;
  return {
    note(arrival) {
      if (draining) return arrival;
      let settle!: () => void;
      const handedOn = new Promise<void>((resolve) => (settle = resolve));
      waiting.add(handedOn);
      const done = () => {
        waiting.delete(handedOn);
        settle();
      };
      early.set(arrival, done);
      // The same object goes on (the place line knows its arrivals by identity): a message dropped
      // on its way (arrival.leave()) is no longer waited for either.
      const leave = arrival.leave.bind(arrival);
      arrival.leave = () => {
        done();
        leave();
      };
      return arrival;
    },
    handed(arrival) {
      if (arrival !== undefined) early.get(arrival)?.();
    },
    admitted: (arrival) => arrival !== undefined && early.has(arrival),
    begin() {
      draining = true;
    },
    waiting,
  };
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
