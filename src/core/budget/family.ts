// Per-place buckets that the platform limits alike (BucketRef.family: Slack's per-channel posts).
// One channel rarely sees a burst big enough to learn from, but every channel has the same limit:
// so a lesson one member learns (a burst confirmed, a 429) becomes every member's (BucketTable
// spreads it), and only one member at a time probes above the confirmed burst, so a platform with
// no more room refuses one probe, not one in every channel.

/** A probe not answered within this long (its write was dropped) frees the lock for another. */
const PROBE_HOLD_MS = 10_000;

/**
 * Who may probe above the confirmed burst, and how many probes were refused in a row. Every bucket
 * has one: its own, or its family's (shared by the members).
 */
export class ProbeLock {
  private prober: { key: string; until: number } | undefined;
  /** Probes refused in a row (see LearnedNumbers.mayProbeUp). */
  refusals = 0;

  /** May `key` raise its burst above the confirmed one now? */
  mayProbe(key: string, now: number): boolean {
    return this.prober === undefined || this.prober.key === key || now >= this.prober.until;
  }

  /** `key` raised its burst: the others wait until it is answered. */
  take(key: string, now: number): void {
    this.prober = { key, until: now + PROBE_HOLD_MS };
  }

  /** `key`'s probe was answered (confirmed or refused). */
  release(key: string): void {
    if (this.prober?.key === key) this.prober = undefined;
  }
}

export class BucketFamily<M> extends ProbeLock {
  readonly members = new Set<M>();

  constructor(readonly key: string) {
    super();
  }
}
