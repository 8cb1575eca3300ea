import type { Clock } from '../../src/core/ports.js';

// A clock the test moves by hand. Timers fire in time order during advance(); between timers the
// event loop is let run (setImmediate) so promise chains woken by a timer settle before the next.

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

export class ManualClock implements Clock {
  private current: number;
  private timers: Timer[] = [];
  private seq = 0;

  constructor(start = 1_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): { clear(): void } {
    const t: Timer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(t);
    return { clear: () => (this.timers = this.timers.filter((x) => x !== t)) };
  }

  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Let promise chains run without moving time. */
  async settle(rounds = 3): Promise<void> {
    for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
  }

  /** Move time forward by ms, firing due timers in order. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    await this.settle();
    for (let guard = 0; guard < 100_000; guard++) {
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = Math.max(this.current, due.at);
      due.fn();
      await this.settle();
    }
    this.current = target;
    await this.settle();
  }

  /** Advance in steps until cond() holds or maxMs passed; returns whether it held. */
  async advanceUntil(cond: () => boolean, maxMs: number, stepMs = 10): Promise<boolean> {
    for (let t = 0; t <= maxMs; t += stepMs) {
      if (cond()) return true;
      await this.advance(stepMs);
    }
    return cond();
  }
}
