// The platforms' rate limits as the core's scheduler sees them: the buckets a write counts
// against, what a platform said about them, and the feed through which connectors report limits
// their SDK met outside a sink's write.

/** A rate-limit bucket a write counts against, with the budget assumed until the platform says more. */
export interface BucketRef {
  /** Stable key, e.g. `discord:channel:123` or `slack:T1:chat.update`. */
  key: string;
  /** Writes allowed per window (a default; learned values from headers replace it). */
  limit: number;
  windowMs: number;
  /**
   * The bucket counts one place's writes (a channel's posts). Replicas answer in a place one at a time (its lease), so
   * such a bucket is not split between them: it is handed over with the place (SharedQueue).
   */
  perPlace?: boolean;
  /**
   * Per-place buckets the platform limits alike (Slack: every channel's posts, "about one a
   * second, short bursts allowed") name one family: what one of them learns, all of them start
   * from, and one at a time probes for a larger burst (budget/bucket-table.ts).
   */
  family?: string;
  /**
   * The key of a wider bucket this place's writes also count in (Slack: a channel's share of the
   * workspace's chat.update). It limits nothing until a 429 of the wider one is blamed on this
   * place by the evidence (budget/place-blame.ts).
   */
  placeOf?: string;
}

/** What the platform told us about a bucket on a successful write (from rate-limit headers). */
export interface RateLimitInfo {
  bucket: string;
  limit?: number;
  remaining?: number;
  /** Milliseconds until the bucket refills. */
  resetAfterMs?: number;
}

/**
 * Out-of-band rate-limit feedback: connectors whose SDK reports limits on its own events
 * (discord.js REST `response`/`rateLimited`, Slack 429s outside a sink write) feed the one
 * scheduler through this. The core's scheduler implements it.
 */
export interface RateLimitObserver {
  observe(info: RateLimitInfo): void;
  limited(bucket: string, retryAfterMs: number): void;
}

export const ignoreRateLimits: RateLimitObserver = { observe: () => {}, limited: () => {} };
