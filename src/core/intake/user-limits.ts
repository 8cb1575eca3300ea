// USER_MESSAGES_PER_MINUTE: a sliding window per platform user. Only accepted messages count.
// Users idle for a whole window are forgotten, so memory stays bounded by the active users.

export class UserRateLimiter {
  private readonly hits = new Map<string, number[]>();
  private lastSweep = 0;

  constructor(
    private readonly perWindow: number,
    private readonly windowMs = 60_000,
  ) {}

  /** Records a message for `key` and returns true, or returns false when the user is over the limit. */
  tryTake(key: string, now: number): boolean {
    this.sweep(now);
    const recent = (this.hits.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (recent.length >= this.perWindow) {
      this.hits.set(key, recent);
      return false;
    }
    recent.push(now);
    this.hits.set(key, recent);
    return true;
  }

  get size(): number {
    return this.hits.size;
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    for (const [key, times] of this.hits) {
      if ((times.at(-1) ?? 0) <= now - this.windowMs) this.hits.delete(key);
    }
  }
}
