import { type Bucket, checkRule, makeBucket } from './rate-buckets.js';
import type { RateModel } from './rate-models.js';

// The fake's rate limiter: enforces a RateModel (rate-models.ts) per method, bucket key and time.
// Time comes from an injectable now() so unit tests drive it by hand.

/** Today's per-method limits (the `current` model), as fixed windows that start with the first call. */
export interface MethodLimit {
  limit: number;
  windowMs: number;
  /** What the limit is counted per: the workspace, or the workspace and channel. */
  per: 'team' | 'channel';
}

export const DEFAULT_LIMITS: Record<string, MethodLimit> = {
  'chat.postMessage': { limit: 1, windowMs: 1000, per: 'channel' },
  'chat.startStream': { limit: 1, windowMs: 1000, per: 'channel' },
  'chat.update': { limit: 50, windowMs: 60_000, per: 'team' },
  // Tier 4 (100+ a minute), per Slack's method reference.
  'chat.appendStream': { limit: 100, windowMs: 60_000, per: 'team' },
};

export type RateDecision =
  | { ok: true }
  | {
      ok: false;
      /** Time until the model would accept this call, in ms. */
      waitMs: number;
      /** What Retry-After says: whole seconds, rounded up, at least 1 (as Slack sends). */
      retryAfterS: number;
      /** The refusing bucket (the one with the longest wait when several refuse). */
      bucket: string;
    };

export class FakeRateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  hits = 0;
  readonly hitsByMethod: Record<string, number> = {};
  readonly hitsByBucket: Record<string, number> = {};

  constructor(
    readonly model: RateModel,
    private readonly now: () => number = Date.now,
  ) {
    for (const rs of Object.values(model.rules)) rs.forEach(checkRule);
  }

  private bucketsFor(method: string, teamId: string, channel: string | undefined, now: number): [string, Bucket][] {
    return (this.model.rules[method] ?? []).map((rule) => {
      const name = rule.label ? `${method}#${rule.label}` : method;
      const key = rule.per === 'channel' ? `${name}:${teamId}:${channel ?? '-'}` : `${name}:${teamId}`;
      let b = this.buckets.get(key);
      if (!b) {
        b = makeBucket(rule, now);
        this.buckets.set(key, b);
      }
      return [key, b];
    });
  }

  /** How long until the call would be accepted (0 = now), without counting it. */
  waitMs(method: string, teamId: string, channel: string | undefined): number {
    const now = this.now();
    return Math.max(0, ...this.bucketsFor(method, teamId, channel, now).map(([, b]) => b.waitMs(now)));
  }

  /** Accepts the call (taking from every bucket) or refuses it without taking anything. */
  decide(method: string, teamId: string, channel: string | undefined): RateDecision {
    const now = this.now();
    const bs = this.bucketsFor(method, teamId, channel, now);
    let worst: { key: string; wait: number } | undefined;
    for (const [key, b] of bs) {
      const wait = b.waitMs(now);
      if (wait > 0 && (!worst || wait > worst.wait)) worst = { key, wait };
    }
    if (!worst) {
      for (const [, b] of bs) b.take(now);
      return { ok: true };
    }
    this.hits += 1;
    this.hitsByMethod[method] = (this.hitsByMethod[method] ?? 0) + 1;
    this.hitsByBucket[worst.key] = (this.hitsByBucket[worst.key] ?? 0) + 1;
    return { ok: false, waitMs: worst.wait, retryAfterS: Math.max(1, Math.ceil(worst.wait / 1000)), bucket: worst.key };
  }

  /** Counts the call; returns the seconds to wait when it is over the limit. */
  take(method: string, teamId: string, channel: string | undefined): number | undefined {
    const d = this.decide(method, teamId, channel);
    return d.ok ? undefined : d.retryAfterS;
  }
}
