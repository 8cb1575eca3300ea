import { ChatError } from '../core/chat-port.js';

// The retry policy of CONTRACT.md §4: 429 honouring Retry-After within a time budget; 5xx and
// failed connections a few times with exponential backoff and full jitter; nothing else. It wraps
// one attempt that ends at the response headers, so a reply whose body was read is never retried.

export interface RetryOptions {
  /** Tries in all for 5xx and connection failures (default 3). */
  maxTries?: number;
  /** Longest total wait for 429s (default 30000 ms). */
  rateLimitBudgetMs?: number;
  /** First backoff step (default 500 ms); doubles per try, capped at 8 s. */
  baseDelayMs?: number;
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RetryPolicy {
  maxTries: number;
  rateLimitBudgetMs: number;
  baseDelayMs: number;
  sleep: Sleep;
  random: () => number;
  onRetry?: (err: ChatError, attempt: number, waitMs: number) => void;
}

const MAX_DELAY_MS = 8_000;
/** A `Retry-After: 0` still waits this long, so a server that always says 0 cannot spin us. */
const MIN_RATE_LIMIT_WAIT_MS = 100;

export function retryPolicy(
  opts: RetryOptions = {},
  sleep: Sleep = abortableSleep,
  random: () => number = Math.random,
): RetryPolicy {
  return {
    maxTries: Math.max(1, opts.maxTries ?? 3),
    rateLimitBudgetMs: Math.max(0, opts.rateLimitBudgetMs ?? 30_000),
    baseDelayMs: Math.max(0, opts.baseDelayMs ?? 500),
    sleep,
    random,
  };
}

export async function withRetry<T>(attempt: () => Promise<T>, policy: RetryPolicy, signal?: AbortSignal): Promise<T> {
  let failures = 0; // 5xx / network
  let rateLimited = 0;
  let waitedForRateLimit = 0;
  for (let n = 1; ; n++) {
    signal?.throwIfAborted();
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof ChatError)) throw err;
      let wait: number;
      if (err.kind === 'rate_limited') {
        const hinted = err.details.retryAfterMs;
        wait = Math.max(MIN_RATE_LIMIT_WAIT_MS, hinted ?? backoff(policy, rateLimited));
        rateLimited++;
        if (waitedForRateLimit + wait > policy.rateLimitBudgetMs) throw err;
        waitedForRateLimit += wait;
      } else if (err.kind === 'server' || err.kind === 'network') {
        failures++;
        if (failures >= policy.maxTries) throw err;
        wait = backoff(policy, failures - 1);
      } else {
        throw err;
      }
      policy.onRetry?.(err, n, wait);
      await policy.sleep(wait, signal);
    }
  }
}

/** Full jitter: uniform in [0, min(cap, base·2^step)). */
function backoff(policy: RetryPolicy, step: number): number {
  return Math.floor(policy.random() * Math.min(MAX_DELAY_MS, policy.baseDelayMs * 2 ** step));
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
