import type { LearnedBudget } from '../ports.js';
import { AcceptedLog } from './accepted-log.js';
import { ProbeLock } from './family.js';

// The numbers a bucket's budget is made of, and what is learned of them: the reference budget
// (the connector's guess, or the platform's headers), the whole platform's sustained rate and
// burst as learned, when a 429 last came, and this replica's share. BudgetModel (model.ts) runs
// the token bucket on them.
//
// Several replicas share one workspace or one bot: `rate`, `burst` and the learned numbers are the
// whole platform's bucket; this replica spends only its share of it (`myRate`, `myBurst`, and
// `myPart` of a `remaining` header), so the replicas together stay within the bucket.
//
// Upward (probeUp): when room was wanted (a reply went post-once for want of a per-minute bucket's
// budget; several posts waited at once in a family's short bucket) and the platform then accepted the whole
// burst in one run, the burst is raised (by three quarters until the bucket's first 429 ever, then
// by one), up to half a per-minute window's limit or a short window's SHORT_BURST_CEILING.
// Intermediate edits never spend the unconfirmed part, and beyond the confirmed burst writes go
// one at a time, so a probe past the platform's room meets one 429, falls back to the confirmed
// burst, and no probe goes for RECENT_LIMIT_MS, twice that after a second refusal in a row, and so
// on up to MAX_PROBE_BACKOFF doublings. What is confirmed is what is saved.

export const MINUTE = 60_000;
const MAX_START_BURST = 4;
/** For this long after a 429 the rate stays below 90% of the one that met it, and no probe goes up. */
export const RECENT_LIMIT_MS = 10 * MINUTE;
/** Refused probes in a row double the wait before the next, at most this many times (5 h 20 min). */
const MAX_PROBE_BACKOFF = 5;
/** The rate never grows above this many times the first guess. */
export const MAX_GROWTH = 2;
/** Writes accepted within this long count as one run (a burst) when probing upward. */
const RUN_MS = 2000;
/** A bucket with a window this long or longer is a per-minute budget: its rate is a guess. */
export const LONG_WINDOW_MS = 10_000;
/**
 * The highest burst a short window's family probes for ("one a second, short bursts allowed"):
 * a few posts at once, never a flood paid for in one channel's 429s.
 */
const SHORT_BURST_CEILING = 5;

export interface NumbersInit {
  key: string;
  limit: number;
  windowMs: number;
  marginMs: number;
  /** This replica's share of the bucket (see share.ts); default 1. */
  share?: number;
  /** BucketRef.perPlace: never split between replicas (its share stays 1). */
  perPlace?: boolean;
  /** BucketRef.family: the key its lessons are kept under (default: its own). */
  lessonKey?: string | undefined;
  /** The family's lock, shared by its members (family.ts); default: one of its own. */
  probeLock?: ProbeLock | undefined;
}

export class LearnedNumbers {
  readonly key: string;
  readonly perPlace: boolean;
  /** What it learns is kept (and shared) under this key: its family's, else its own. */
  readonly lessonKey: string;
  /** One of a family (BucketRef.family): a short window of one write may probe for a burst. */
  private readonly inFamily: boolean;
  protected readonly probeLock: ProbeLock;
  /** The reference budget: the connector's default, or the platform's headers once seen. */
  limit: number;
  windowMs: number;
  marginMs: number;
  /** The platform sent a limit in headers: those numbers replace the guess. */
  headers = false;
  /** Made by a 429 reported before any write: the first BucketRef supplies the real budget. */
  provisional = false;
  /** Tokens per ms: the whole platform's sustained rate, as learned. */
  rate: number;
  /** The whole platform's burst, as learned: while a probe is out, above `confirmedBurst`. */
  burst: number;
  /**
   * A burst the platform has accepted whole (or the first guess, or a stored lesson): intermediate
   * edits count only on it, and a probe that meets a 429 falls back to it.
   */
  confirmedBurst: number;
  /** This replica's share of the bucket; tokens are counted in this replica's writes. */
  protected share: number;
  lastShrinkAt = Number.NEGATIVE_INFINITY;
  lastLimitedAt = Number.NEGATIVE_INFINITY;
  /** The rate (per ms) assumed when the last 429 came. */
  rateAt429 = 0;
  /** The platform accepted a whole window's worth at the assumed rate (see rateCounted). */
  protected proven = false;
  /** Accepted writes within the last window (for estimates after a 429, and probing upward). */
  protected readonly accepted = new AcceptedLog();
  /** When a reply last went post-once for want of this budget (what makes probeUp look). */
  private wantedAt = Number.NEGATIVE_INFINITY;
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
    this.limit = Math.max(1, init.limit);
    this.windowMs = Math.max(1, init.windowMs);
    this.marginMs = init.marginMs;
    this.perPlace = init.perPlace ?? false;
    this.lessonKey = init.lessonKey ?? init.key;
    this.inFamily = init.probeLock !== undefined;
    this.probeLock = init.probeLock ?? new ProbeLock();
    this.share = this.perPlace ? 1 : (init.share ?? 1);
    const d = this.defaults();
    this.rate = d.rate;
    this.burst = d.burst;
    this.confirmedBurst = d.burst;
  }

  /**
   * The highest burst a probe may reach: half a per-minute bucket's reference limit, a few writes
   * for a short window's family (alone, a short window is paced at its rate), and none for a
   * bucket the headers describe.
   */
  burstCeiling(): number {
    if (this.headers) return this.burst;
    if (this.windowMs < LONG_WINDOW_MS) {
      // Only one write a window (Slack's posts): a burst above it keeps the rate of one a window.
      // With more, a larger burst would have to lower the window-safe rate (see probeUp): a
      // channel taking 4 a second would go down to 1 a second for a few posts at once.
      if (!this.inFamily || this.limit > 1) return this.burst;
      return Math.max(this.burst, SHORT_BURST_CEILING);
    }
    // Half the window's limit: the other half stays for the sustained rate (see probeUp).
    return Math.max(this.burst, Math.ceil(this.limit / 2));
  }

  /**
   * May the burst be raised above what is confirmed? Not within RECENT_LIMIT_MS of a 429, doubled
   * for each refused probe in a row after the first: a platform with no more room pays one 429 per
   * probe, and fewer and fewer probes (10, 20, 40 min apart, …).
   */
  mayProbeUp(now: number): boolean {
    const backoff = 2 ** clamp(this.probeLock.refusals - 1, 0, MAX_PROBE_BACKOFF);
    return this.burst < this.burstCeiling() && now - this.lastLimitedAt >= RECENT_LIMIT_MS * backoff;
  }

  /**
   * How far one probe raises the burst: by three quarters until the bucket has met its first 429
   * ever (a generous workspace is found within two bursts: 4, 7, 13), then one write at a time.
   * Not double: the replies that stream on a probe that fails wait for their finals at the
   * platform's rate (on a 20-a-minute workspace, 3 s each), so the overshoot is kept small.
   */
  probeStep(): number {
    return Number.isFinite(this.lastLimitedAt) ? 1 : Math.ceil((this.burst * 3) / 4);
  }

  /**
   * A raise this member made and did not use is dropped once another member took the family's
   * lock: two probes out at once would meet two 429s. Returns whether it was dropped.
   */
  protected dropStaleProbe(now: number): boolean {
    if (!this.probingUp || this.probeLock.mayProbe(this.key, now)) return false;
    this.burst = this.confirmedBurst;
    return true;
  }

  /** The burst is raised above what the platform has accepted whole: a probe is out. */
  get probingUp(): boolean {
    return this.burst > this.confirmedBurst;
  }

  /** A reply went post-once for want of this budget: room would have been used. */
  protected wanted(now: number): void {
    this.wantedAt = now;
  }

  /** Several posts wait for this bucket at once: in a short window's family, room would be used. */
  postsWaited(now: number): void {
    if (this.inFamily && this.windowMs < LONG_WINDOW_MS) this.wantedAt = now;
  }

  /**
   * Writes accepted within this long count as one run: a burst. A short window's own length (its
   * paced writes are never two within it), else RUN_MS.
   */
  private get runMs(): number {
    return Math.min(RUN_MS, this.windowMs);
  }

  /**
   * After an accepted write: what it confirmed, and whether to raise the burst. A whole burst
   * accepted in one run while room was wanted raises it; returns the tokens that adds (the room
   * is in hand at once: the platform's bucket is that much larger than the burst just spent).
   */
  protected probeUp(now: number): number {
    if (this.share !== 1) return 0;
    const run = this.accepted.since(now - this.runMs);
    if (run > this.confirmedBurst) {
      this.confirmedBurst = Math.min(this.burst, run);
      this.probeLock.refusals = 0;
      if (!this.probingUp) this.probeLock.release(this.key);
      this.changed(now);
    }
    if (!this.mayProbeUp(now)) return 0;
    // Only when room was wanted: a reply went post-once for want of it within the last minute
    // (steady writers are paced by the rate, and a burst says nothing new to them); in a short
    // window, a post waits now (it takes the room at once: a raise left unused would outlive the
    // family's lock).
    const wantedWithin = this.windowMs < LONG_WINDOW_MS ? this.windowMs : MINUTE;
    if (now - this.wantedAt > wantedWithin || run < this.burst) return 0;
    if (!this.probeLock.mayProbe(this.key, now)) return 0;
    this.probeLock.take(this.key, now);
    this.wantedAt = Number.NEGATIVE_INFINITY;
    const next = Math.min(this.burstCeiling(), this.burst + this.probeStep());
    const added = next - this.burst;
    this.burst = next;
    // Still safe against a window limit: a burst and a window's refill together stay within it.
    const span = this.windowMs + this.marginMs;
    this.rate = Math.max(this.floorRate, Math.min(this.rate, (this.limit - next + 1) / span));
    this.changed(now);
    return added;
  }

  /**
   * The next write would spend the unconfirmed part of the burst while another is on its way:
   * beyond what is confirmed, writes go one at a time, so a probe past the platform's room meets
   * one 429, not as many as were sent together.
   */
  protected probeInFlight(tokens: number, inFlight: number): boolean {
    const unconfirmed = this.myBurst - this.myConfirmedBurst;
    return unconfirmed > 0 && inFlight > 0 && tokens - 1 < unconfirmed;
  }

  /** A stored lesson (a restart, or another replica's newer one) replaces the numbers. */
  protected restore(l: LearnedBudget): void {
    const d = this.defaults();
    this.rate = clamp(l.perMinute / MINUTE, this.floorRate, d.rate * MAX_GROWTH);
    // A burst confirmed earlier (probed up) is kept up to the ceiling, not cut to the first guess.
    this.burst = clamp(Math.floor(l.burst), 1, Math.max(d.burst, this.burstCeiling(), 1));
    this.confirmedBurst = this.burst;
    this.learnedAt = l.updatedAt;
    this.dirty = false;
    if (l.limitedAt !== undefined) {
      this.lastLimitedAt = l.limitedAt;
      this.lastShrinkAt = l.limitedAt;
      this.rateAt429 = (l.limitedPerMinute ?? l.perMinute) / MINUTE;
    }
  }

  /**
   * A 429 while a probe was out: back to the burst last accepted whole. The rate is untouched (the
   * burst overreached, not the rate; a 429 after this one shrinks it as usual), and no probe goes
   * for RECENT_LIMIT_MS (lastLimitedAt). Returns whether it was a probe's.
   */
  protected probeRefused(now: number): boolean {
    if (!this.probingUp) return false;
    this.burst = this.confirmedBurst;
    this.probeLock.release(this.key);
    this.probeLock.refusals++;
    this.changed(now);
    return true;
  }

  /** This replica's part of the confirmed burst. */
  get myConfirmedBurst(): number {
    return this.share === 1 ? this.confirmedBurst : Math.max(1, Math.floor(this.confirmedBurst * this.share));
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
    // The confirmed burst is what is kept: a probe still out is a guess, not a lesson.
    const l: LearnedBudget = {
      key: this.lessonKey,
      perMinute: this.rate * MINUTE,
      burst: this.confirmedBurst,
      updatedAt,
    };
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
