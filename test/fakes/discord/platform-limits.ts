import { HttpError } from './http-util.js';

// Discord's 429s beyond a route's own bucket, on demand: the global limit (X-RateLimit-Global,
// X-RateLimit-Scope: global, no per-route headers; every request of the bot is refused until it
// ends, except interaction endpoints, which the global limit does not bind) and a shared-resource
// limit (X-RateLimit-Scope: shared, with the route's headers). `Retry-After` is whole seconds as
// Discord sends it; `retry_after` in the body the exact time. The fake's window is the exact time.

export interface LimitedRequest {
  at: number;
  method: string;
  path: string;
  scope: 'global' | 'shared';
}

interface Armed {
  method: string;
  path: RegExp;
  retryAfterMs: number;
}

export class FakePlatformLimits {
  private globalArmed: Armed | undefined;
  private readonly sharedArmed: Armed[] = [];
  private globalUntil = 0;
  /** Every request answered 429 here, in order. */
  readonly refused: LimitedRequest[] = [];
  /**
   * Requests that arrived while the global limit held, after the one that started it: a client
   * that honours the limit sends none once it has read the 429.
   */
  readonly duringGlobal: LimitedRequest[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  /** The next bot request matching `method` and `path` starts a global limit of `retryAfterMs`. */
  armGlobal(method: string, path: RegExp, retryAfterMs: number): void {
    this.globalArmed = { method, path, retryAfterMs };
  }

  /** The next bot request matching `method` and `path` gets a shared-scope 429 of `retryAfterMs`. */
  armShared(method: string, path: RegExp, retryAfterMs: number): void {
    this.sharedArmed.push({ method, path, retryAfterMs });
  }

  get globalHolds(): boolean {
    return this.now() < this.globalUntil;
  }

  /** The 429 for this request, or undefined to let it through. `interaction`: an interaction endpoint. */
  check(method: string, path: string, interaction: boolean): HttpError | undefined {
    const now = this.now();
    if (!interaction && now < this.globalUntil) {
      const r: LimitedRequest = { at: now, method, path, scope: 'global' };
      this.refused.push(r);
      this.duringGlobal.push(r);
      return globalError(this.globalUntil - now);
    }
    const g = this.globalArmed;
    if (!interaction && g !== undefined && matches(g, method, path)) {
      this.globalArmed = undefined;
      this.globalUntil = now + g.retryAfterMs;
      this.refused.push({ at: now, method, path, scope: 'global' });
      return globalError(g.retryAfterMs);
    }
    const i = this.sharedArmed.findIndex((a) => matches(a, method, path));
    const shared = i >= 0 ? this.sharedArmed.splice(i, 1)[0] : undefined;
    if (shared === undefined) return undefined;
    this.refused.push({ at: now, method, path, scope: 'shared' });
    return sharedError(shared.retryAfterMs, now);
  }
}

function matches(a: Armed, method: string, path: string): boolean {
  return a.method === method && a.path.test(path);
}

function globalError(ms: number): HttpError {
  return new HttpError(
    429,
    { message: 'You are being rate limited.', retry_after: ms / 1000, global: true },
    { 'Retry-After': String(Math.ceil(ms / 1000)), 'X-RateLimit-Global': 'true', 'X-RateLimit-Scope': 'global' },
  );
}

function sharedError(ms: number, now: number): HttpError {
  return new HttpError(
    429,
    { message: 'The resource is being rate limited.', retry_after: ms / 1000, global: false },
    {
      'Retry-After': String(Math.ceil(ms / 1000)),
      'X-RateLimit-Limit': '5',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': ((now + ms) / 1000).toFixed(3),
      'X-RateLimit-Reset-After': (ms / 1000).toFixed(3),
      'X-RateLimit-Bucket': 'channel-messages',
      'X-RateLimit-Scope': 'shared',
    },
  );
}
