// Per-method rate limits of the fake, as fixed windows that start with the first call (how
// Slack describes its per-minute tiers). Smaller windows keep tests fast. A window ends
// `toleranceMs` early: Slack allows short bursts, and on a loaded loopback two requests sent
// a window apart can arrive a few tens of milliseconds closer than that.

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
  'chat.appendStream': { limit: 50, windowMs: 60_000, per: 'team' },
};

export class FakeRateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  hits = 0;
  readonly hitsByMethod: Record<string, number> = {};

  constructor(
    private readonly limits: Record<string, MethodLimit>,
    private readonly now: () => number = Date.now,
    private readonly toleranceMs = 100,
  ) {}

  /** Counts the call; returns the seconds to wait when it is over the limit. */
  take(method: string, teamId: string, channel: string | undefined): number | undefined {
    const lim = this.limits[method];
    if (!lim) return undefined;
    const key = lim.per === 'channel' ? `${method}:${teamId}:${channel ?? '-'}` : `${method}:${teamId}`;
    const now = this.now();
    let w = this.windows.get(key);
    if (!w || now - w.start >= lim.windowMs - Math.min(this.toleranceMs, lim.windowMs / 10)) {
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    if (w.count >= lim.limit) {
      this.hits += 1;
      this.hitsByMethod[method] = (this.hitsByMethod[method] ?? 0) + 1;
      return Math.max(1, Math.ceil((w.start + lim.windowMs - now) / 1000));
    }
    w.count += 1;
    return undefined;
  }
}
