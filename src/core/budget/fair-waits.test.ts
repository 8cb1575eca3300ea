import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { FairQueue, FairSlots } from '../intake/place-order.js';
import type { Release } from '../intake/place-order.js';
import type { BucketRef } from '../ports.js';
import { RateLimitScheduler, type WritePriority } from './scheduler.js';

// Fair waits (issue 19): one user's many waiting replies cannot put another user's behind all of
// them, in the upstream slots and in every platform bucket. Time only moves by the manual clock.

/** A channel's posts: one a second, as Slack's chat.postMessage. */
const posts: BucketRef = { key: 'slack:T1:C1:post', limit: 1, windowMs: 1000 };

describe('FairQueue', () => {
  it('serves parties in rotation, FIFO within a party; a newcomer waits for one item of each party ahead', () => {
    const q = new FairQueue<string>();
    for (let i = 1; i <= 5; i++) q.push('flood', `f${i}`);
    q.push('other', 'o1');
    expect(q.size).toBe(6);
    expect([q.shift(), q.shift(), q.shift(), q.shift()]).toEqual(['f1', 'o1', 'f2', 'f3']);
    q.push('third', 't1');
    expect([q.shift(), q.shift(), q.shift(), q.shift()]).toEqual(['f4', 't1', 'f5', undefined]);
    expect(q.size).toBe(0);
  });

  it('removes an item that gave up, and forgets an emptied party', () => {
    const q = new FairQueue<string>();
    q.push('a', 'a1');
    q.push('b', 'b1');
    expect(q.remove('a', 'a1')).toBe(true);
    expect(q.remove('a', 'a1')).toBe(false);
    q.push('a', 'a2'); // back at the end of the rotation
    expect([q.shift(), q.shift()]).toEqual(['b1', 'a2']);
  });
});

describe('FairSlots: slots in turn by user', () => {
  it('gives the next free slot to another user before the rest of one user’s queue', async () => {
    const slots = new FairSlots(2);
    const held: Release[] = [];
    held.push(await slots.acquire(undefined, 'flood'), await slots.acquire(undefined, 'flood'));
    const order: string[] = [];
    const waits: Promise<void>[] = [];
    for (let i = 1; i <= 58; i++) {
      waits.push(slots.acquire(undefined, 'flood').then((r) => (order.push(`f${i}`), held.push(r), undefined)));
    }
    waits.push(slots.acquire(undefined, 'other').then((r) => (order.push('other'), held.push(r), undefined)));
    expect(slots.waiting).toBe(59);
    expect([slots.waitingFor('flood'), slots.waitingFor('other'), slots.waitingFor('none')]).toEqual([58, 1, 0]);
    held.shift()?.();
    held.shift()?.();
    await Promise.resolve();
    await new Promise<void>((r) => setImmediate(r));
    expect(order).toEqual(['f1', 'other']);
  });

  it('drops an aborted waiter from its user’s line', async () => {
    const slots = new FairSlots(1);
    const first = await slots.acquire(undefined, 'a');
    const abort = new AbortController();
    const gone = slots.acquire(abort.signal, 'a');
    const next = slots.acquire(undefined, 'b');
    abort.abort(new Error('stop'));
    await expect(gone).rejects.toThrow('stop');
    expect(slots.waiting).toBe(1);
    first();
    await expect(next).resolves.toBeTypeOf('function');
  });
});

describe('RateLimitScheduler: a channel’s posts in turn by user', () => {
  /** Grants `flood` posts of one user and one of another, in the order the budget serves them. */
  async function serveOrder(priority: WritePriority, flood: number) {
    const clock = new ManualClock();
    const s = new RateLimitScheduler({ clock, marginMs: 0 });
    const order: string[] = [];
    for (let i = 1; i <= flood; i++)
      void s.acquire([posts], priority, undefined, 'flood').then(() => order.push(`f${i}`));
    await clock.settle();
    // The other user's reply arrives once the flood is queued.
    void s.acquire([posts], priority, undefined, 'other').then(() => order.push('other'));
    await clock.advanceUntil(() => order.includes('other'), 120_000, 100);
    return { order, s, clock };
  }

  it('with 60 posts of one user queued, another user’s post is granted within two of the channel’s posts', async () => {
    for (const priority of ['first', 'final', 'edit'] as const) {
      const { order } = await serveOrder(priority, 60);
      // f1 went at once (budget was there); the newcomer comes right after the next one at most.
      expect(order.indexOf('other'), priority).toBeLessThanOrEqual(2);
    }
  });

  it('keeps FIFO within one user, and every write is still paced by the bucket', async () => {
    const { order, clock, s } = await serveOrder('first', 10);
    await clock.advance(20_000);
    expect(order.filter((x) => x !== 'other')).toEqual(Array.from({ length: 10 }, (_, i) => `f${i + 1}`));
    expect(order).toHaveLength(11);
    expect(s.stats().waiting).toBe(0);
  });

  it('still serves finals before first posts whoever asks', async () => {
    const clock = new ManualClock();
    const s = new RateLimitScheduler({ clock, marginMs: 0 });
    await s.acquire([posts], 'edit', undefined, 'x'); // spend the budget
    const order: string[] = [];
    void s.acquire([posts], 'first', undefined, 'other').then(() => order.push('other-first'));
    void s.acquire([posts], 'final', undefined, 'flood').then(() => order.push('flood-final'));
    void s.acquire([posts], 'notice', undefined, 'flood').then(() => order.push('flood-notice'));
    void s.acquire([posts], 'edit', undefined, 'flood').then(() => order.push('flood-edit'));
    await clock.advance(5000);
    expect(order).toEqual(['flood-final', 'other-first', 'flood-edit', 'flood-notice']);
  });

  it('a notice leaves the budget that a reserved final needs, like an edit', async () => {
    const clock = new ManualClock();
    const s = new RateLimitScheduler({ clock, marginMs: 0 });
    const one: BucketRef = { key: 'slack:T1:update', limit: 1, windowMs: 60_000 };
    const release = s.reserve([one]);
    let noticed = false;
    void s.acquire([one], 'notice', undefined, 'flood').then(() => (noticed = true));
    await clock.advance(1000);
    expect(noticed).toBe(false);
    release();
    await clock.settle();
    expect(noticed).toBe(true);
  });

  it('remembers the parties it served for a minute only', async () => {
    const clock = new ManualClock();
    const s = new RateLimitScheduler({ clock });
    const roomy: BucketRef = { key: 'roomy', limit: 100_000, windowMs: 60_000 };
    for (let i = 0; i < 1000; i++) {
      (await s.acquire([roomy], 'final', undefined, `u${i}`)).done();
      await clock.advance(1);
    }
    expect(s.partiesRemembered).toBe(1000);
    await clock.advance(120_000);
    (await s.acquire([roomy], 'final', undefined, 'late')).done();
    expect(s.partiesRemembered).toBe(1);
  });
});
