import { PlatformRateLimitedError, type RateLimitInfo, type WriteResult } from '../ports.js';

// What became of a granted write. Every write's outcome reaches the budgets by this one path
// (WriteGrant.done), so the scheduler sees headers, 429s and failures in the order they happened
// and can tell a 429 apart from the writes that were accepted around it.

export type WriteOutcome =
  | { ok: true; rateLimits?: readonly RateLimitInfo[] }
  | {
      ok: false;
      rateLimited: {
        retryAfterMs: number;
        /** The bucket the platform refused (one of the write's); default: the write's first. */
        bucket?: string;
        /** The platform paused every write (Discord global limit): block, learn nothing. */
        global?: boolean;
      };
    }
  /** Failed for another reason (network, refused content): counts as spent, teaches nothing. */
  | { ok: false; error: true }
  /** Never sent (the writer had nothing left to write once granted): the token is given back. */
  | { ok: false; unused: true };

export const unusedOutcome: WriteOutcome = { ok: false, unused: true };

export function okOutcome(result: WriteResult): WriteOutcome {
  return result.rateLimits === undefined ? { ok: true } : { ok: true, rateLimits: result.rateLimits };
}

/** The outcome of a write that threw. */
export function errorOutcome(err: unknown): WriteOutcome {
  if (err instanceof PlatformRateLimitedError) {
    const rateLimited: { retryAfterMs: number; bucket: string; global?: boolean } = {
      retryAfterMs: err.retryAfterMs,
      bucket: err.bucket,
    };
    if (err.global) rateLimited.global = true;
    return { ok: false, rateLimited };
  }
  return { ok: false, error: true };
}
