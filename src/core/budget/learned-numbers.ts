import type { LearnedBudget } from '../ports.js';

// The numbers a bucket's budget is made of, and what is learned of them: the reference budget
// (the connector's guess, or the platform's headers), the whole platform's sustained rate and
// burst as learned, when a 429 last came, and this replica's share. BudgetModel (model.ts) runs
// the token bucket on them.
//
// Several replicas share one workspace or one bot: `rate`, `burst` and the learned numbers are the
// whole platform's bucket; this replica spends only its share of it (`myRate`, `myBurst`, and
// `myPart` of a `remaining` header), so the replicas together stay within the bucket.

export const MINUTE = 60_000;
const MAX_START_BURST = 4;
/** A bucket with a window this long or longer is a per-minute budget: its rate is a guess. */
const LONG_WINDOW_MS = 10_000;

export interface NumbersInit {
  key: string;
  limit: number;
  windowMs: number;
  marginMs: number;
  /** An implicit per-channel bucket: unlimited until a 429 teaches it a limit. */
  shadow?: boolean;
  /** This replica's share of the bucket (see share.ts); default 1. */
  share?: number;
  /** BucketRef.perPlace: never split between replicas (its share stays 1). */
  perPlace?: boolean;
}

export class LearnedNumbers {
  readonly key: string;
  readonly shadow: boolean;
  readonly perPlace: boolean;
  /** The reference budget: the connector's default, or the platform's headers once seen. */
  limit: number;
  windowMs: number;
  marginMs: number;
  /** The platform sent a limit in headers: those numbers replace the guess. */
  headers = false;
  /** A shadow bucket that has not met a 429 yet. */
  unlimited: boolean;
  /** Made by a 429 reported before any write: the first BucketRef supplies the real budget. */
  provisional = false;
  /** Tokens per ms: the whole platform's sustained rate, as learned. */
  rate: number;
  /** The whole platform's burst, as learned. */
  burst: number;
  /** This replica's share of the bucket; tokens are counted in this replica's writes. */
  protected share: number;
  lastShrinkAt = Number.NEGATIVE_INFINITY;
  lastLimitedAt = Number.NEGATIVE_INFINITY;
  /** The rate (per ms) assumed when the last 429 came. */
  rateAt429 = 0;
  /** The platform accepted a whole window's worth at the assumed rate (see rateCounted). */
  protected proven = false;
  /** Learned numbers changed since they were last saved. */
  dirty = false;
  lastSavedAt = Number.NEGATIVE_INFINITY;
  /**
   * When the learned numbers last changed here, or the time of the stored row they came from: a
   * row of another replica replaces them only if it is newer (and is saved with this time).
   */
  learnedAt = Number.NEGATIVE_INFINITY;

  constructor(init: NumbersInit) {
    this.key = init.key;
    this.shadow = init.shadow ?? false;
    this.unlimited = this.shadow;
    this.limit = Math.max(1, init.limit);
    this.windowMs = Math.max(1, init.windowMs);
    this.marginMs = init.marginMs;
    this.perPlace = init.perPlace ?? false;
    this.share = this.perPlace ? 1 : (init.share ?? 1);
    const d = this.defaults();
    this.rate = d.rate;
    this.burst = d.burst;
  }

  /** The first guess for this bucket's reference budget. */
  defaults(): { rate: number; burst: number } {
    const span = this.windowMs + this.marginMs;
    if (this.headers) return { rate: this.limit / span, burst: this.limit };
    // A per-minute bucket allows a modest burst; a short one is paced (the full rate, and safe
    // against window limits), until headers tell the platform's own count.
    const burst = this.windowMs >= LONG_WINDOW_MS ? clamp(Math.floor(this.limit / 10), 1, MAX_START_BURST) : 1;
    return { rate: (this.limit - burst + 1) / span, burst };
  }

  /**
   * Refill at the sustained rate may be counted on ahead of time: a short window's (paced at its
   * rate from the start), or a per-minute rate that a 429, a header or a proven window confirmed.
   */
  protected rateCounted(): boolean {
    if (this.windowMs < LONG_WINDOW_MS) return true;
    return this.headers || Number.isFinite(this.lastShrinkAt) || this.proven;
  }

  /** Never less than one write per window. */
  protected get floorRate(): number {
    return 1 / (this.windowMs + this.marginMs);
  }

  /** This replica's sustained rate (tokens per ms): its share of the platform's, never 0. */
  get myRate(): number {
    return this.share === 1 ? this.rate : this.rate * this.share;
  }

  /** This replica's burst: its share of the platform's, at least one write. */
  get myBurst(): number {
    return this.share === 1 ? this.burst : Math.max(1, Math.floor(this.burst * this.share));
  }

  /** This replica's part of a count the platform keeps for all replicas (a `remaining` header). */
  protected myPart(count: number): number {
    return this.share === 1 ? count : Math.floor(count * this.share);
  }

  /** The learned numbers, dated when they changed (`now` if they never did). */
  toLearned(now: number): LearnedBudget {
    const updatedAt = Number.isFinite(this.learnedAt) ? this.learnedAt : now;
    const l: LearnedBudget = { key: this.key, perMinute: this.rate * MINUTE, burst: this.burst, updatedAt };
    if (Number.isFinite(this.lastLimitedAt)) {
      l.limitedAt = this.lastLimitedAt;
      l.limitedPerMinute = this.rateAt429 * MINUTE;
    }
    return l;
  }

  /** The learned numbers changed (now): to be saved, dated now. */
  protected changed(now: number): void {
    this.dirty = true;
    this.learnedAt = now;
  }
}

export function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}
