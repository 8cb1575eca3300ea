import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { makeBucket, type RateRule } from '../../../test/fakes/slack/rate-buckets.js';
import { MemoryBudgetStore } from '../../../test/fakes/budget-store.js';
import type { BucketRef, Lesson } from '../ports.js';
import { RateLimitScheduler, type WriteGrant, type WritePriority } from './scheduler.js';

// The learned budgets against platforms whose limits are tighter than, or shaped differently
// from, the connectors' defaults. Time is a ManualClock; the platform answers each write at once.

const MIN = 60_000;
const UPDATE: BucketRef = { key: 'slack:T1:update', limit: 50, windowMs: MIN };

/** A platform enforcing one stationary rule (a fake Slack bucket), answering like Slack. */
function platform(clock: ManualClock, rule: RateRule) {
  const bucket = makeBucket(rule, clock.now());
  const limited: number[] = [];
  let accepted = 0;
  return {
    limited,
    get accepted() {
      return accepted;
    },
    answer(grant: WriteGrant, key?: string): boolean {
      const now = clock.now();
      const wait = bucket.waitMs(now);
      if (wait === 0) {
        bucket.take(now);
        accepted++;
        grant.done({ ok: true });
        return true;
      }
      limited.push(now);
      const retryAfterMs = Math.max(1, Math.ceil(wait / 1000)) * 1000;
      grant.done({ ok: false, rateLimited: key === undefined ? { retryAfterMs } : { retryAfterMs, bucket: key } });
      return false;
    },
  };
}

/** `n` loops that each write again as soon as the last write was answered, until stop(). */
function writers(
  n: number,
  s: RateLimitScheduler,
  buckets: () => BucketRef[],
  answer: (g: WriteGrant) => void,
  priority: WritePriority = 'edit',
): { stop(): void; done: Promise<unknown> } {
  let stopped = false;
  const loops = Array.from({ length: n }, async () => {
    while (!stopped) {
      const g = await s.acquire(buckets(), priority);
      if (stopped) return g.done();
      answer(g);
    }
  });
  return {
    stop: () => {
      stopped = true;
      s.close(new Error('stopped'));
    },
    done: Promise.allSettled(loops),
  };
}

describe('learned budgets', () => {
  it('(a) a bucket tighter than the default (burst 5, 20/min): at most one more 429 in 10 minutes after the first, then regrowth', async () => {
    const clock = new ManualClock();
    const s = new RateLimitScheduler({ clock });
    const p = platform(clock, { kind: 'token', limit: 20, windowMs: MIN, burst: 5, per: 'team' });
    const w = writers(
      5,
      s,
      () => [UPDATE],
      (g) => p.answer(g),
    );
    expect(await clock.advanceUntil(() => p.limited.length > 0, MIN, 100)).toBe(true);
    const first = p.limited[0] as number;
    const shrunk = s.budget(UPDATE.key)?.perMinute as number;
    expect(shrunk).toBeLessThan(20);
    const acceptedAtFirst = p.accepted;
    await clock.advance(10 * MIN);
    w.stop();
    await w.done;
    expect(p.limited.filter((t) => t > first && t <= first + 10 * MIN).length).toBeLessThanOrEqual(1);
    // it grew back while writes kept waiting and no 429 came, and writes kept flowing
    expect(s.budget(UPDATE.key)?.perMinute).toBeGreaterThan(shrunk * 1.5);
    expect(p.accepted - acceptedAtFirst).toBeGreaterThan(50);
  });

  it('(a) platforms at exactly the default (fixed window, sliding log, first-call window): no 429 before the model probes above it', async () => {
    for (const kind of ['fixed-window', 'sliding-log', 'first-window'] as const) {
      const clock = new ManualClock();
      const s = new RateLimitScheduler({ clock });
      const p = platform(clock, { kind, limit: 50, windowMs: MIN, per: 'team' });
      const w = writers(
        5,
        s,
        () => [UPDATE],
        (g) => p.answer(g),
      );
      await clock.advance(3 * MIN);
      expect(p.limited, kind).toEqual([]);
      // growing above the default (up to 2x while no 429 comes) finds the limit once, no more
      await clock.advance(7 * MIN);
      w.stop();
      await w.done;
      expect(p.limited.length, kind).toBeLessThanOrEqual(1);
      expect(p.accepted, kind).toBeGreaterThan(10 * 40);
    }
  });

  it('(b) a refused write frees its slot: no waiting a window for budget the platform never spent', async () => {
    const clock = new ManualClock();
    const s = new RateLimitScheduler({ clock, marginMs: 0 });
    const a: BucketRef = { key: 'a', limit: 1, windowMs: 1000 };
    const b: BucketRef = { key: 'b', limit: 5, windowMs: 1000 };
    // refused in b: its token in a is given back, a write in a alone goes at once
    const g = await s.acquire([a, b], 'edit');
    g.done({ ok: false, rateLimited: { retryAfterMs: 500, bucket: 'b' } });
    let inA = false;
    void s.acquire([a], 'edit').then(() => (inA = true));
    await clock.settle();
    expect(inA).toBe(true);

    // refused in its own bucket, several times: the next write goes when the block ends, not a
    // window (a minute) later as if every refused write had been spent
    const t0 = clock.now();
    for (let i = 0; i < 3; i++) {
      const r = await s.acquire([UPDATE], 'final');
      if (i < 2) r.done({ ok: true });
      else r.done({ ok: false, rateLimited: { retryAfterMs: 1000 } });
    }
    let at = 0;
    void s.acquire([UPDATE], 'final').then(() => (at = clock.now()));
    await clock.advance(MIN);
    expect(at - t0).toBe(1000);
  });

  it('(d) finals are never starved by edits: each goes within the final horizon', async () => {
    const clock = new ManualClock();
    const s = new RateLimitScheduler({ clock });
    const p = platform(clock, { kind: 'token', limit: 50, windowMs: MIN, burst: 20, per: 'team' });
    const live = 3; // 47/min with burst 4 pays 3 reserved finals and still streams
    const releases = Array.from({ length: live }, () => s.reserve([UPDATE]));
    let edits = 0;
    const w = writers(
      10,
      s,
      () => [UPDATE],
      (g) => {
        if (p.answer(g)) edits++;
      },
    );
    const waits: number[] = [];
    for (let i = 0; i < 20; i++) {
      await clock.advance(7000);
      const asked = clock.now();
      const g = await s.acquire([UPDATE], 'final');
      waits.push(clock.now() - asked);
      p.answer(g);
    }
    w.stop();
    await w.done;
    for (const r of releases) r();
    expect(Math.max(...waits)).toBeLessThanOrEqual(2000);
    expect(edits).toBeGreaterThan(0);
    expect(p.limited).toEqual([]);
  });

  it('(e) after a block the queued writes go one first, then paced at the sustained rate', async () => {
    const clock = new ManualClock();
    const s = new RateLimitScheduler({ clock, marginMs: 0 });
    s.limited(UPDATE.key, 1); // known before the block: the default budget (no lesson)
    await clock.advance(10);
    s.limited(UPDATE.key, 3000);
    const t0 = clock.now();
    const times: number[] = [];
    for (let i = 0; i < 5; i++) void s.acquire([UPDATE], 'final').then(() => times.push(clock.now() - t0));
    await clock.advance(30_000);
    expect(times[0]).toBe(3000);
    const period = MIN / (s.budget(UPDATE.key)?.perMinute as number);
    for (let i = 1; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(Math.floor(period));
  });

  it('(f) what was learned is saved, at most every few seconds per bucket, and reloaded', async () => {
    const clock = new ManualClock();
    const store = new MemoryBudgetStore();
    const s = new RateLimitScheduler({ clock, store, saveEveryMs: 5000 });
    const p = platform(clock, { kind: 'token', limit: 20, windowMs: MIN, burst: 5, per: 'team' });
    const w = writers(
      5,
      s,
      () => [UPDATE],
      (g) => p.answer(g),
    );
    await clock.advanceUntil(() => p.limited.length > 0, MIN, 100);
    const learned = s.budget(UPDATE.key)?.perMinute as number;
    expect(store.rows.get(UPDATE.key)?.perMinute).toBeCloseTo(learned);
    expect(store.rows.get(UPDATE.key)?.limitedAt).toBe(p.limited[0]);
    await clock.advance(5 * MIN);
    w.stop(); // close() saves the latest
    await w.done;
    expect(store.saves).toBeLessThanOrEqual(1 + 5 * 12 + 1);
    const last = store.rows.get(UPDATE.key) as Lesson;
    expect(last.perMinute).toBeCloseTo(s.budget(UPDATE.key)?.perMinute as number);

    // a restart: the new scheduler starts from the lesson, not from the default
    const again = new RateLimitScheduler({ clock, store });
    await again.restore();
    await again.acquire([UPDATE], 'final');
    expect(again.budget(UPDATE.key)?.perMinute).toBeCloseTo(last.perMinute);
    expect(again.budget(UPDATE.key)?.learned).toBe(true);
  });
});
