// Per-place buckets that the platform limits alike (BucketRef.family: Slack's per-channel posts).
// One channel rarely sees a burst big enough to learn from, but every channel has the same limit:
// so a lesson one member learns (a burst confirmed, a 429) becomes every member's (BucketTable
// spreads it), and only one member at a time probes above the confirmed burst, so a platform with
// no more room refuses one probe, not one in every channel.

/** A probe not answered within this long (its write was dropped) frees the family for another. */
const PROBE_HOLD_MS = 10_000;

export interface ProbeLock {
  /** May `key` raise its burst above the family's confirmed one now? */
  mayProbe(key: string, now: number): boolean;
  /** `key` raised its burst: the others wait until it is answered. */
  take(key: string, now: number): void;
  /** `key`'s probe was answered (confirmed or refused). */
  release(key: string): void;
  /** Probes refused in a row, the family's (see LearnedNumbers.mayProbeUp). */
  refusals: number;
}

export class BucketFamily<M> implements ProbeLock {
  readonly members = new Set<M>();
  private prober: { key: string; until: number } | undefined;
  refusals = 0;

  constructor(readonly key: string) {}

  mayProbe(key: string, now: number): boolean {
    return this.prober === undefined || this.prober.key === key || now >= this.prober.until;
  }

  take(key: string, now: number): void {
    this.prober = { key, until: now + PROBE_HOLD_MS };
  }

  release(key: string): void {
    if (this.prober?.key === key) this.prober = undefined;
  }
}
