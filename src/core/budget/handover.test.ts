import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import type { BucketRef } from '../ports.js';
import { RateLimitScheduler, shareOf } from './scheduler.js';

// A place's own bucket (a channel's posts, BucketRef.perPlace) is not split between replicas:
// replicas take turns in the place, and the bucket goes with it (SharedQueue hands it over).

const post: BucketRef = { key: 'slack:T1:D1:post', limit: 1, windowMs: 1000, perPlace: true };

/** When a write asked for at `clock.now()` is granted, in ms from the ask. */
async function waitOf(s: RateLimitScheduler, clock: ManualClock): Promise<number> {
  const asked = clock.now();
  let at: number | undefined;
  void s.acquire([post], 'first').then((g) => {
    at = clock.now();
    g.done({ ok: true });
  });
  for (let i = 0; i < 100 && at === undefined; i++) await clock.advance(50);
  return (at ?? Infinity) - asked;
}

describe('per-place buckets across replicas', () => {
  it('keep the whole platform rate whatever the share', async () => {
    const clock = new ManualClock();
    const s = new RateLimitScheduler({ clock });
    s.setShare(shareOf(3));
    expect(await waitOf(s, clock)).toBe(0);
    expect(await waitOf(s, clock)).toBeLessThanOrEqual(1100); // 1/s, not 1 per 3 s
    expect(s.budget(post.key)?.mine.perMinute).toBeCloseTo(s.budget(post.key)?.perMinute as number);
  });

  it('a place handed over waits for the other replica’s last write there, and only for that', async () => {
    const clock = new ManualClock();
    const a = new RateLimitScheduler({ clock });
    const b = new RateLimitScheduler({ clock });
    const postedAt = clock.now();
    expect(await waitOf(a, clock)).toBe(0);
    const writes = a.placeWrites([post, { key: 'slack:T1:update', limit: 50, windowMs: 60_000 }]);
    expect(writes).toEqual([{ bucket: post, at: postedAt }]); // only the per-place bucket
    b.handOver(writes);
    const waited = await waitOf(b, clock);
    // B would have posted at once without it; with it, one second after A's post.
    expect(clock.now() - postedAt).toBeGreaterThanOrEqual(1000);
    expect(waited).toBeGreaterThan(0);
    expect(waited).toBeLessThanOrEqual(1100);
    // A write long ago costs nothing.
    await clock.advance(5_000);
    b.handOver(writes);
    expect(await waitOf(b, clock)).toBe(0);
  });
});
