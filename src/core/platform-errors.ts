// The errors a sink throws for a write the platform refused, which the scheduler and the reply
// writer tell apart: rate limited (wait), refused for its rich form (the plain fallback), failed for good.

/** Thrown by a sink when the platform answered 429; the scheduler backs the bucket off. */
export class PlatformRateLimitedError extends Error {
  override readonly name = 'PlatformRateLimitedError';
  constructor(
    readonly bucket: string,
    readonly retryAfterMs: number,
    /** true when the platform says the limit is global (Discord) */
    readonly global = false,
  ) {
    super(`rate limited on ${bucket} for ${retryAfterMs} ms`);
  }
}

/** Thrown by a sink for a write that will never succeed (message deleted, no permission, ...). */
export class PlatformWriteError extends Error {
  override readonly name = 'PlatformWriteError';
  constructor(
    message: string,
    readonly code: string,
    /** true when retrying the same write could work (network); false when it cannot */
    readonly retryable = false,
  ) {
    super(message);
  }
}

/**
 * `PlatformWriteError.code` of a write the platform refused for its rich form (a block,
 * Markdown, buttons) after the sink stepped down to its next form (the plain fallback): the write goes again at once, on a new
 * grant, since the refused call spent the platform's budget as any call does.
 */
export const PLAIN_FALLBACK = 'form_refused';
