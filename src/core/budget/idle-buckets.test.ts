import { describe, expect, it } from 'vitest';
import { MemoryBudgetStore } from '../../../test/fakes/budget-store.js';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import type { BucketRef } from '../ports.js';
import { RateLimitScheduler } from './scheduler.js';

// Months, not minutes (issue 31): every new place (a Slack channel's posts, a Discord thread)
// makes a per-place bucket. One at rest (full again, nothing reserved or in flight, quiet 10 s and
// a window) is dropped; what its family learned stays, so a returning channel starts from the
// lesson.

const MIN = 60_000;
const post = (channel: string): BucketRef => ({
  key: `slack:T1:${channel}:post`,
  limit: 10,
  windowMs: MIN,
  perPlace: true,
  family: 'slack:T1:posts',
});
const thread = (id: string): BucketRef => ({ key: `discord:channel:${id}`, limit: 5, windowMs: 5000, perPlace: true });

async function write(s: RateLimitScheduler, ref: BucketRef, clock: ManualClock): Promise<void> {
  const g = await s.acquire([ref], 'final');
  await clock.advance(5);
  g.done({ ok: true });
}

describe('per-place buckets are dropped at rest', () => {
  it('4,000 new places: the table holds only the last minute of them', async () => {
    const clock = new ManualClock();
    const s = new RateLimitScheduler({ clock });
    for (let i = 0; i < 4000; i++) {
      await write(s, i % 2 === 0 ? post(`C${i}`) : thread(`T${i}`), clock);
      await clock.advance(45); // 20 new places a second
    }
    // The last minute's posts (a window of a minute: 600) and the last 10 s's threads (100) at
    // most; never one per place seen.
    expect(s.stats().buckets).toBeLessThanOrEqual(750);
    await clock.advance(2 * MIN);
    await write(s, post('C-last'), clock);
    expect(s.stats().buckets).toBe(1);
    s.close();
  });

  it('a Discord thread whose writes carried rate-limit headers is dropped at rest too', async () => {
    const clock = new ManualClock();
    const s = new RateLimitScheduler({ clock });
    for (let i = 0; i < 2000; i++) {
      const ref = thread(`H${i}`);
      const g = await s.acquire([ref], 'final');
      await clock.advance(5);
      // What Discord answers on a thread's first message: 5 per 5 s, 4 left, full again in 5 s.
      g.done({ ok: true, rateLimits: [{ bucket: ref.key, limit: 5, remaining: 4, resetAfterMs: 5000 }] });
      await clock.advance(45);
    }
    // The last 10 s's threads (200) at most, not the last 10 minutes' (forgetAfterMs).
    expect(s.stats().buckets).toBeLessThanOrEqual(250);
    await clock.advance(2 * MIN);
    await write(s, thread('H-last'), clock);
    expect(s.stats().buckets).toBe(1);
    s.close();
  });

  it('a bucket with a final reserved, or not yet full again, is kept', async () => {
    const clock = new ManualClock();
    const s = new RateLimitScheduler({ clock });
    const busy = post('Cbusy');
    s.reserve([busy]);
    await write(s, post('C1'), clock);
    await clock.advance(2 * MIN);
    await write(s, post('C2'), clock);
    expect(s.budget(busy.key)).toBeDefined();
    expect(s.budget(post('C1').key)).toBeUndefined();
    s.close();
  });

  it('a returning channel starts from what its family learned, here and after a restart', async () => {
    const clock = new ManualClock();
    const store = new MemoryBudgetStore();
    const s = new RateLimitScheduler({ clock, store });
    const before = s.budget(post('C0').key);
    expect(before).toBeUndefined();
    const g = await s.acquire([post('C0')], 'final');
    const fresh = s.budget(post('C0').key)?.perMinute as number;
    g.done({ ok: false, rateLimited: { retryAfterMs: 2000, bucket: post('C0').key } });
    const learned = s.budget(post('C0').key)?.perMinute as number;
    expect(learned).toBeLessThan(fresh);
    // C0 goes quiet; other places come and go until it is forgotten.
    for (let i = 1; i <= 10; i++) {
      await clock.advance(MIN);
      await write(s, thread(`T${i}`), clock);
    }
    expect(s.budget(post('C0').key)).toBeUndefined();
    // It comes back with the family's lesson, as does a channel never seen.
    await write(s, post('C0'), clock);
    expect(s.budget(post('C0').key)?.perMinute).toBe(learned);
    await write(s, post('Cnew'), clock);
    expect(s.budget(post('Cnew').key)?.perMinute).toBe(learned);
    s.close();
    await s.flush();
    // Restarted: the lesson comes from the store.
    const again = new RateLimitScheduler({ clock, store });
    await again.restore();
    await write(again, post('C0'), clock);
    expect(again.budget(post('C0').key)?.perMinute).toBe(learned);
    again.close();
  });
});
