// How fast a reply's text grows: the characters it gained over the last interval (early on,
// what it gained so far, scaled up to one interval). The writer asks it whether the current
// message will be full before its next write could leave (reply-cut.ts, `fillsSoon`).

/** Below this much history an estimate is noise (one chunk): no growth is assumed. */
const MIN_SPAN_MS = 100;

export class TextGrowth {
  /** (time, content length) at each append, oldest first; one sample older than the interval kept. */
  private samples: { at: number; length: number }[] = [];

  record(at: number, length: number): void {
    this.samples.push({ at, length });
  }

  /** Characters the text would gain over the next `intervalMs` at its pace over the last one. */
  perInterval(now: number, intervalMs: number): number {
    const from = now - intervalMs;
    // Keep the last sample at or before `from` as the base, drop the older ones.
    let drop = 0;
    while (drop + 1 < this.samples.length && (this.samples[drop + 1] as { at: number }).at <= from) drop++;
    if (drop > 0) this.samples.splice(0, drop);
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (first === undefined || last === undefined) return 0;
    const gained = last.length - first.length;
    const span = now - first.at;
    if (span >= intervalMs) return gained;
    return span < MIN_SPAN_MS ? 0 : (gained * intervalMs) / span;
  }
}
