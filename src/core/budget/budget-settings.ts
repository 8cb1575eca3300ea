// Every tuning constant of the budget in one object: the scheduler's, the table's and what the
// learning functions (learning.ts) use. Tests and the place blame read the same values.

export const MINUTE = 60_000;

/** Every tuning constant of the budget. */
export const BUDGET = {
  minute: MINUTE,
  /** After a 429 the rate is at most this fraction of what it was. */
  shrink: 0.7,
  /** An estimate from accepted writes is discounted by this much (ours are never exact). */
  safety: 0.9,
  /** A minute of pressure without a 429 grows the rate by this factor. */
  growth: 1.05,
  /** The rate never grows above this many times the first guess. */
  maxGrowth: 2,
  /** A per-minute bucket's first burst: a tenth of its limit, at most this. */
  maxStartBurst: 4,
  /** For this long after a 429 the rate stays below 90% of the one that met it, and no probe goes. */
  recentLimitMs: 10 * MINUTE,
  /** Refused probes in a row double the wait before the next, at most this many times (5 h 20). */
  maxProbeBackoff: 5,
  /** Writes accepted within this long count as one run (a burst) when probing. */
  runMs: 2000,
  /** A bucket with a window this long or longer is a per-minute budget: its rate is a guess. */
  longWindowMs: 10_000,
  /** The highest burst a short window's family probes for: a few posts at once, never a flood. */
  shortBurstCeiling: 5,
  /** A probe not answered within this long (its write was dropped) frees the family's lock. */
  probeLockMs: 10_000,
  /** A reserved final must be payable within this long (tokens now plus what refills meanwhile). */
  finalHorizonMs: 2000,
  /** A bucket with no activity for this long is forgotten (its lesson is kept). */
  forgetAfterMs: 10 * MINUTE,
  /**
   * A per-place bucket at rest this long (and a window) is forgotten (Bucket.atRest): full again
   * with nothing reserved, it is what a new one made from the family's lesson would be. Each new place
   * a second keeps this many seconds of buckets (soak: a minute's were 3,700 at 65 places/s).
   */
  perPlaceRestMs: 10_000,
  /** A bucket's lesson is written at most this often (a 429's at once). */
  saveEveryMs: 5000,
  /** Lessons kept in memory (oldest forgotten first). */
  maxLessons: 10_000,
  /** Buckets are swept for idleness at most this often, unless there are more than maxBuckets. */
  sweepEveryMs: 1000,
  maxBuckets: 10_000,
  /** A party (user) not served for this long is forgotten by the fair order. */
  partyForgetMs: 60_000,
  /** Added to every window and block unless configured: 5% of the window, at least 50 ms. */
  marginFraction: 0.05,
  minMarginMs: 50,
} as const;
