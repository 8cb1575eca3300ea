import { describe, expect, it } from 'vitest';
import { MemoryBudgetStore } from '../../../test/fakes/budget-store.js';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { channelUpdateBucket, DEFAULT_SLACK_LIMITS, updateBucket } from '../../connectors/slack/rate-limits.js';
import type { BucketRef } from '../ports.js';
import { blamesPlace } from './place-blame.js';
import { RateLimitScheduler } from './scheduler.js';

// Whose 429 is it, the workspace's chat.update bucket's or its channel's (place-blame.ts)? On a
// manual clock: the evidence rule alone, then the scheduler's buckets after a 429.

const W = updateBucket(DEFAULT_SLACK_LIMITS, 'T1');
const at = (c: string): BucketRef[] => [W, channelUpdateBucket(DEFAULT_SLACK_LIMITS, 'T1', c)];
const C = (c: string) => `slack:T1:${c}:update`;
const REFUSED = { ok: false as const, rateLimited: { retryAfterMs: 6000, bucket: W.key } };

/** A write in channel `c`, granted now, answered `ok` (or refused). */
async function write(s: RateLimitScheduler, c: string, ok = true): Promise<void> {
  (await s.acquire(at(c), 'final')).done(ok ? { ok: true } : REFUSED);
}

describe('the evidence', () => {
  const none = { place: 'C0', last: undefined, now: 10_000 };
  it('several writes of the place accepted in a run that others wrote in too: the place', () => {
    expect(blamesPlace({ ...none, placeRun: 3, wholeRun: 9 })).toBe(true);
  });
  it('one place writing, or one write of the place: the wider bucket', () => {
    expect(blamesPlace({ ...none, placeRun: 3, wholeRun: 3 })).toBe(false);
    expect(blamesPlace({ ...none, placeRun: 1, wholeRun: 9 })).toBe(false);
  });
  it('another place refused while the last blamed one is blocked: the wider bucket', () => {
    const last = { place: 'C1', until: 16_300 };
    expect(blamesPlace({ ...none, placeRun: 3, wholeRun: 9, last })).toBe(false);
    expect(blamesPlace({ ...none, placeRun: 3, wholeRun: 9, last, now: 16_300 })).toBe(true);
    expect(blamesPlace({ ...none, placeRun: 3, wholeRun: 9, last: { ...last, place: 'C0' } })).toBe(true);
  });
});

describe('a 429 of the workspace blamed on a channel', () => {
  it('blocks that channel only, teaches every channel its burst, and the workspace nothing', async () => {
    const clock = new ManualClock(1_000_000);
    const s = new RateLimitScheduler({ clock, marginMs: 0 });
    const start = clock.now();
    // C0 and C1 write 2 each, a few ms apart (the workspace's first burst is 4)
    for (const c of ['C0', 'C1', 'C0', 'C1']) {
      await write(s, c);
      await clock.advance(5);
    }
    expect(s.budget(C('C0'))?.learned).toBe(false); // limits nothing so far
    await clock.advance(1300); // the workspace refilled a write
    await write(s, 'C0', false);
    const now = clock.now();
    expect(s.budget(W.key)?.learned).toBe(false);
    expect(s.budget(W.key)?.blockedUntil).toBeLessThan(now);
    const c0 = s.budget(C('C0'));
    expect(c0?.learned).toBe(true);
    expect(c0?.burst).toBe(2);
    expect(c0?.blockedUntil).toBe(now + 6000 + 300); // its Retry-After and 5% of it
    // the family's lesson: C1 wrote 2 too, so its next write waits for a write's refill (6.3 s)
    expect(s.budget(C('C1'))?.burst).toBe(2);
    let c0Went = 0;
    let c1Went = 0;
    let c2Went = 0;
    void s.acquire(at('C0'), 'final').then((g) => ((c0Went = clock.now()), g.done({ ok: true })));
    void s.acquire(at('C1'), 'final').then((g) => ((c1Went = clock.now()), g.done({ ok: true })));
    void s.acquire(at('C2'), 'final').then((g) => ((c2Went = clock.now()), g.done({ ok: true })));
    for (let i = 0; i < 100 && (c0Went === 0 || c1Went === 0); i++) await clock.advance(100);
    // C2 (a channel that had not written) is not held behind C0's and C1's waits for the workspace
    expect(c2Went - now).toBeLessThanOrEqual(1400);
    expect(c0Went).toBeGreaterThanOrEqual(now + 6300);
    expect(c1Went - start).toBeGreaterThanOrEqual(6300);
    expect(Math.max(c0Went, c1Went) - now).toBeLessThanOrEqual(6400);
    s.close();
  });

  it('one channel writing: the workspace (shrunk and blocked), the channel learns nothing', async () => {
    const clock = new ManualClock(1_000_000);
    const s = new RateLimitScheduler({ clock, marginMs: 0 });
    await write(s, 'C0');
    await write(s, 'C0');
    await write(s, 'C0', false);
    expect(s.budget(W.key)?.learned).toBe(true);
    expect(s.budget(W.key)?.blockedUntil).toBe(clock.now() + 6000);
    expect(s.budget(C('C0'))?.learned).toBe(false);
    s.close();
  });

  it('a second channel refused while the first is blocked: the workspace', async () => {
    const clock = new ManualClock(1_000_000);
    const s = new RateLimitScheduler({ clock, marginMs: 0 });
    for (const c of ['C0', 'C1', 'C0', 'C1']) await write(s, c);
    await clock.advance(1400);
    await write(s, 'C0', false);
    expect(s.budget(W.key)?.learned).toBe(false);
    expect(s.budget(C('C1'))?.burst).toBe(2); // the family's lesson
    await clock.advance(100);
    await write(s, 'C2', false);
    expect(s.budget(W.key)?.learned).toBe(true);
    expect(s.budget(W.key)?.blockedUntil).toBe(clock.now() + 6000);
    // C0's blame was wrong: no channel keeps a limit (the cleared lesson reached the family)
    expect(s.budget(C('C0'))?.learned).toBe(false);
    expect(s.budget(C('C1'))?.burst).toBeGreaterThan(1000);
    s.close();
  });

  it("a cleared channel lesson is kept as such: a restart's channels limit nothing", async () => {
    const clock = new ManualClock(1_000_000);
    const store = new MemoryBudgetStore();
    const s = new RateLimitScheduler({ clock, marginMs: 0, store });
    for (const c of ['C0', 'C1', 'C0', 'C1']) await write(s, c);
    await clock.advance(1400);
    await write(s, 'C0', false);
    await clock.advance(100);
    await write(s, 'C2', false);
    s.close();
    await s.flush();
    const again = new RateLimitScheduler({ clock, marginMs: 0, store });
    await again.restore();
    await write(again, 'C3');
    expect(again.budget(C('C3'))?.burst).toBeGreaterThan(1000);
    again.close();
    s.close();
  });
});
