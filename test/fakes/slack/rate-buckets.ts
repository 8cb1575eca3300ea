// One rate-limit bucket per rule and key (workspace, or workspace and channel). Slack publishes
// only "Tier 3: 50+ per minute, short bursts allowed" and "about 1 per second per channel"; the
// algorithm behind them is unknown, so the fake can enforce several plausible ones (rate-models.ts).
// Every bucket answers two questions for a time `now` (integer ms): how long until it would
// accept a call (0 = now), and "take one" (only called when every rule of the call accepts, so
// a refused call never consumes budget).

export type RateRuleKind = 'first-window' | 'token' | 'fixed-window' | 'sliding-log';

export interface RateRule {
  kind: RateRuleKind;
  /** Calls per window (token: sustained rate = limit per windowMs). */
  limit: number;
  windowMs: number;
  /** Token bucket capacity (default `limit`). */
  burst?: number;
  /** What the limit is counted per: the workspace, or the workspace and channel. */
  per: 'team' | 'channel';
  /** first-window only: a window ends this much early (at most a tenth of it). */
  toleranceMs?: number;
  /** Tells apart two rules of one method in bucket keys (e.g. `channel`). */
  label?: string;
}

export interface Bucket {
  waitMs(now: number): number;
  take(now: number): void;
}

/**
 * Today's guess: a window starts with the first call after the previous one ended and holds
 * `limit` calls. It ends `toleranceMs` early: on a loaded loopback two requests sent a window
 * apart can arrive a few tens of milliseconds closer than that.
 */
class FirstCallWindow implements Bucket {
  private start = 0;
  private count = 0;
  private open = false;
  constructor(private readonly r: RateRule) {}
  private get span(): number {
    return this.r.windowMs - Math.min(this.r.toleranceMs ?? 100, this.r.windowMs / 10);
  }
  private expired(now: number): boolean {
    return !this.open || now - this.start >= this.span;
  }
  waitMs(now: number): number {
    return this.expired(now) || this.count < this.r.limit ? 0 : this.start + this.span - now;
  }
  take(now: number): void {
    if (this.expired(now)) {
      this.start = now;
      this.count = 0;
      this.open = true;
    }
    this.count += 1;
  }
}

/**
 * Token bucket, starting full. Kept in integer units so waits are exact: one token is `windowMs`
 * units and the bucket refills `limit` units per ms (= limit tokens per window).
 */
class TokenBucket implements Bucket {
  private units: number;
  private last: number;
  constructor(
    private readonly r: RateRule,
    now: number,
  ) {
    this.units = this.capacity;
    this.last = now;
  }
  private get capacity(): number {
    return (this.r.burst ?? this.r.limit) * this.r.windowMs;
  }
  private refill(now: number): void {
    if (now <= this.last) return;
    this.units = Math.min(this.capacity, this.units + (now - this.last) * this.r.limit);
    this.last = now;
  }
  waitMs(now: number): number {
    this.refill(now);
    return this.units >= this.r.windowMs ? 0 : Math.ceil((this.r.windowMs - this.units) / this.r.limit);
  }
  take(now: number): void {
    this.refill(now);
    this.units -= this.r.windowMs;
  }
}

/** Fixed windows aligned to the clock: [k*windowMs, (k+1)*windowMs) of epoch time. */
class AlignedWindow implements Bucket {
  private index = Number.NaN;
  private count = 0;
  constructor(private readonly r: RateRule) {}
  waitMs(now: number): number {
    const i = Math.floor(now / this.r.windowMs);
    if (i !== this.index || this.count < this.r.limit) return 0;
    return (i + 1) * this.r.windowMs - now;
  }
  take(now: number): void {
    const i = Math.floor(now / this.r.windowMs);
    if (i !== this.index) {
      this.index = i;
      this.count = 0;
    }
    this.count += 1;
  }
}

/** Sliding log: at most `limit` accepted calls in any window (now - windowMs, now]. */
class SlidingLog implements Bucket {
  private times: number[] = [];
  constructor(private readonly r: RateRule) {}
  private prune(now: number): void {
    while (this.times.length > 0 && (this.times[0] ?? 0) <= now - this.r.windowMs) this.times.shift();
  }
  waitMs(now: number): number {
    this.prune(now);
    if (this.times.length < this.r.limit) return 0;
    // The oldest call that still counts leaves the window windowMs after it was made.
    return (this.times[this.times.length - this.r.limit] ?? now) + this.r.windowMs - now;
  }
  take(now: number): void {
    this.prune(now);
    this.times.push(now);
  }
}

/** Throws on a rule no bucket can honour (a zero limit would never accept a call). */
export function checkRule(rule: RateRule): void {
  const ints = [rule.limit, rule.windowMs, rule.burst ?? rule.limit];
  if (!ints.every((n) => Number.isInteger(n) && n >= 1)) {
    throw new Error(`rate rule needs integer limit, windowMs and burst >= 1: ${JSON.stringify(rule)}`);
  }
}

export function makeBucket(rule: RateRule, now: number): Bucket {
  switch (rule.kind) {
    case 'first-window':
      return new FirstCallWindow(rule);
    case 'token':
      return new TokenBucket(rule, now);
    case 'fixed-window':
      return new AlignedWindow(rule);
    case 'sliding-log':
      return new SlidingLog(rule);
  }
}
