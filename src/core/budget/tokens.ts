// The token bucket, numbers in and out: pure maths over a plain value (a Bucket keeps its value:
// bucket.ts).

/** Tokens valued at `at` (later than now during a block). */
export type Tokens = { readonly tokens: number; readonly at: number };

/** The tokens at `now`: refilled at `rate` per ms up to `burst` (none before `at`). */
export function refill(t: Tokens, rate: number, burst: number, now: number): Tokens {
  if (now <= t.at) return t;
  return { tokens: Math.min(burst, t.tokens + (now - t.at) * rate), at: now };
}

/** When `need` tokens are in hand: at once, or once they refilled (never before `at`). */
export function tokensReadyAt(t: Tokens, rate: number, need: number, now: number): number {
  if (t.tokens >= need) return Math.max(now, t.at);
  return Math.max(now, t.at) + Math.ceil((need - t.tokens) / rate);
}

/**
 * What a bucket of `rate` and `burst`, full before the first of `times`, holds at `now` after
 * paying a token at each of them (never below 0: the platform took them all). A bucket that
 * counted nothing until now learns its numbers (place-blame.ts) and starts from what its writes
 * left.
 */
export function replay(times: readonly number[], rate: number, burst: number, now: number): Tokens {
  let t: Tokens = { tokens: burst, at: times[0] ?? now };
  for (const at of times) {
    const r = refill(t, rate, burst, at);
    t = { tokens: Math.max(0, r.tokens - 1), at: r.at };
  }
  return refill(t, rate, burst, now);
}
