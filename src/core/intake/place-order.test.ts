import { describe, expect, it } from 'vitest';
import { UserRateLimiter } from './admission.js';
import { FairSlots, PlaceOrder } from './place-order.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('PlaceOrder, the turns here', () => {
  it('runs one at a time per place, in order, bounded, and other places independently', async () => {
    const q = new PlaceOrder({ maxWaitingPerPlace: 2 });
    const order: string[] = [];
    const a1 = q.enterLocal('a');
    const a2 = q.enterLocal('a');
    const a3 = q.enterLocal('a');
    expect(q.enterLocal('a')).toBeUndefined(); // two already waiting
    const b1 = q.enterLocal('b');
    expect(q.waiting).toBe(2);
    void a2?.then((r) => {
      order.push('a2');
      r();
    });
    void a3?.then((r) => {
      order.push('a3');
      r();
    });
    (await b1)?.();
    const release = await a1;
    order.push('a1');
    await tick();
    expect(order).toEqual(['a1']);
    release?.();
    release?.(); // a second release must not let a3 overtake
    await tick();
    expect(order).toEqual(['a1', 'a2', 'a3']);
    expect(q.waiting).toBe(0);
    expect(q.enterLocal('a')).toBeDefined(); // the lane was freed
  });
});

describe('FairSlots', () => {
  it('admits at most max, FIFO', async () => {
    const s = new FairSlots(2);
    const r1 = await s.acquire();
    await s.acquire();
    const got: number[] = [];
    void s.acquire().then(() => got.push(3));
    void s.acquire().then(() => got.push(4));
    await tick();
    expect(got).toEqual([]);
    expect(s.waiting).toBe(2);
    r1();
    await tick();
    expect(got).toEqual([3]);
    expect(s.inUse).toBe(2);
  });
});

describe('UserRateLimiter', () => {
  it('allows N per sliding minute per user and forgets idle users', () => {
    const l = new UserRateLimiter(2);
    expect(l.tryTake('u', 0)).toBe(true);
    expect(l.tryTake('u', 10_000)).toBe(true);
    expect(l.tryTake('u', 20_000)).toBe(false);
    expect(l.tryTake('v', 20_000)).toBe(true);
    expect(l.tryTake('u', 60_001)).toBe(true); // the first left the window
    expect(l.tryTake('w', 200_000)).toBe(true);
    expect(l.size).toBe(1);
  });
});
