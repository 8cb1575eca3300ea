// The times of a bucket's accepted writes over its last window: after a 429, what the platform
// actually accepted is the best estimate of its limit. Bounded: at most `max` times are kept.

export class AcceptedLog {
  private times: number[] = [];

  /** Record a write accepted at `now`, forgetting those at or before `from`. */
  add(now: number, from: number, max: number): void {
    this.times.push(now);
    let drop = 0;
    while (drop < this.times.length && (this.times[drop] as number) <= from) drop++;
    drop = Math.max(drop, this.times.length - max);
    if (drop > 0) this.times.splice(0, drop);
  }

  /** Accepted writes after `from`. */
  since(from: number): number {
    let n = 0;
    for (let i = this.times.length - 1; i >= 0 && (this.times[i] as number) > from; i--) n++;
    return n;
  }
}
