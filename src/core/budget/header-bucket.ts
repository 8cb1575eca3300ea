import type { RateLimitInfo } from '../ports.js';
import type { BucketMode } from './bucket-mode.js';
import { type Learned, limited, type Reference } from './learning.js';

// The bucket the platform's headers describe (Discord's X-RateLimit-*): followed, not learned.
// A plain value the owning Bucket (bucket.ts) keeps; its learned numbers are learning.ts's.
// HEADER_MODE is the Bucket's strategy once the headers gave a limit (bucket-mode.ts).

/**
 * What the headers said. With a limit, its numbers replace the learned ones (the platform counts,
 * we follow: no guess, no probe, no shrink); `remaining` caps the grants until `until`; the bucket
 * is full again at `resetAt`.
 */
export interface HeaderBucket {
  readonly limit: number | undefined;
  readonly rate: number;
  readonly windowMs: number;
  readonly allowance: { readonly remaining: number; readonly until: number } | undefined;
  readonly resetAt: number | undefined;
}

/** The header bucket after `info` (its window and limit; `remaining` is the Bucket's to apply). */
export function followHeaders(h: HeaderBucket | undefined, info: RateLimitInfo, r: Reference): HeaderBucket {
  let next = h ?? { limit: undefined, rate: 0, windowMs: r.windowMs, allowance: undefined, resetAt: undefined };
  const reset = info.resetAfterMs;
  if (reset !== undefined && reset > next.windowMs) next = { ...next, windowMs: reset };
  const limit = info.limit;
  if (limit === undefined || limit <= 0 || limit === next.limit) return next;
  return { ...next, limit, rate: limit / (next.windowMs + r.marginMs) };
}

/**
 * A bucket whose headers gave a limit: their numbers, no guess, no probe, no shrink (a 429 only
 * backs off: learning.limited). Its refill is the platform's own, so it is counted on.
 */
export const HEADER_MODE: BucketMode<Learned, HeaderBucket> = {
  name: 'header-followed',
  limitsNothing: false,
  probes: false,
  numbers: (s, h) => {
    if (h?.limit === undefined) return s; // never: modeOf picks this mode for a limit only
    return { rate: h.rate, burst: h.limit, confirmedBurst: h.limit };
  },
  probingUp: () => false,
  rateCounted: () => true,
  shrink: (s, now) => ({ s: limited(s, now), kind: 'followed' }),
};
