import { BUDGET } from './learning.js';

// Who may probe above the confirmed burst: a family's members share one lock (bucket-table.ts), a
// bucket alone has its own; refused probes in a row back the next one off (learning.mayProbeUp).

/** Who may probe above the confirmed burst (a family's members share one; bucket-table.ts). */
export interface ProbeLock {
  readonly refusals: number;
  mayProbe(key: string, now: number): boolean;
  take(key: string, now: number): void;
  release(key: string): void;
  confirmed(): void;
  refused(key: string): void;
}

/** A family's (or one bucket's own) right to probe, and how many probes were refused in a row. */
export class Lock implements ProbeLock {
  private prober: { key: string; until: number } | undefined;
  private refusedInRow = 0;

  get refusals(): number {
    return this.refusedInRow;
  }

  mayProbe(key: string, now: number): boolean {
    return this.prober === undefined || this.prober.key === key || now >= this.prober.until;
  }

  take(key: string, now: number): void {
    this.prober = { key, until: now + BUDGET.probeHoldMs };
  }

  release(key: string): void {
    if (this.prober?.key === key) this.prober = undefined;
  }

  /** A probe was confirmed: the backoff starts over. */
  confirmed(): void {
    this.refusedInRow = 0;
  }

  refused(key: string): void {
    this.release(key);
    this.refusedInRow++;
  }
}
