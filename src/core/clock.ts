// Time: the one clock every message reads, injected everywhere so that tests control it
// (test/fakes/manual-clock.ts). Imported through ports.ts like the other shared values.

export interface Clock {
  now(): number;
  /** A cancellable timer; injected so tests control time. */
  setTimeout(fn: () => void, ms: number): { clear(): void };
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    return { clear: () => clearTimeout(t) };
  },
};
