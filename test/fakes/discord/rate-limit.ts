// Fixed-window buckets like Discord's per-route/per-major-parameter limits, with the real headers.

export interface BucketConfig {
  limit: number;
  windowMs: number;
}

interface Window {
  startedAt: number;
  used: number;
}

export interface BucketVerdict {
  allowed: boolean;
  headers: Record<string, string>;
  /** Seconds, for the 429 body. */
  retryAfter: number;
}

export class FakeRateLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly config: BucketConfig,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Count a request against `key` (e.g. `msgs:<channel>`); `hash` is what X-RateLimit-Bucket says,
   * shared by routes that share the limit (create and edit message).
   */
  take(key: string, hash: string): BucketVerdict {
    const now = this.now();
    let w = this.windows.get(key);
    if (!w || now >= w.startedAt + this.config.windowMs) {
      w = { startedAt: now, used: 0 };
      this.windows.set(key, w);
    }
    const resetAt = w.startedAt + this.config.windowMs;
    const resetAfter = Math.max(0, resetAt - now) / 1000;
    const allowed = w.used < this.config.limit;
    if (allowed) w.used += 1;
    const headers: Record<string, string> = {
      'X-RateLimit-Limit': String(this.config.limit),
      'X-RateLimit-Remaining': String(Math.max(0, this.config.limit - w.used)),
      'X-RateLimit-Reset': (resetAt / 1000).toFixed(3),
      'X-RateLimit-Reset-After': resetAfter.toFixed(3),
      'X-RateLimit-Bucket': hash,
    };
    if (!allowed) {
      headers['Retry-After'] = String(Math.ceil(resetAfter));
      headers['X-RateLimit-Scope'] = 'user';
    }
    return { allowed, headers, retryAfter: Number(resetAfter.toFixed(3)) };
  }
}
