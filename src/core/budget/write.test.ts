import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { type BucketRef, PlatformRateLimitedError, type WriteResult } from '../ports.js';
import { RateLimitScheduler } from './scheduler.js';
import { forParty } from './write-scheduler.js';

// write(): the whole grant handshake in one call (acquire a grant, run the write, report what the
// platform said), so a caller cannot forget done() or report a 429 as a failure.

const post: BucketRef = { key: 'slack:T1:C1:post', limit: 1, windowMs: 1000 };

function setup(): { clock: ManualClock; s: RateLimitScheduler } {
  const clock = new ManualClock();
  return { clock, s: new RateLimitScheduler({ clock }) };
}

/** Resolves the promise while moving the clock (grants wait for refill or a block). */
async function settled<T>(clock: ManualClock, p: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  let out: { value?: T; error?: unknown } | undefined;
  p.then(
    (value) => (out = { value }),
    (error: unknown) => (out = { error }),
  );
  await clock.advanceUntil(() => out !== undefined, 60_000);
  if (out === undefined) throw new Error('the write never settled');
  return out;
}

describe('RateLimitScheduler.write', () => {
  it('runs the write on a grant, returns its result and reports it accepted', async () => {
    const { clock, s } = setup();
    const result: WriteResult = { rateLimits: [{ bucket: post.key, limit: 1, remaining: 0, resetAfterMs: 1000 }] };
    const got = await s.write([post], 'first', async () => result);
    expect(got).toBe(result);
    // The grant was done with the headers: the bucket follows them (nothing left until the reset).
    const blocked = s.budget(post.key)?.blockedUntil ?? 0;
    expect(blocked).toBeGreaterThan(clock.now());
    expect(s.stats().waiting).toBe(0);
  });

  it('after a 429 the bucket backs off and the write goes again on a new grant', async () => {
    const { clock, s } = setup();
    const sentAt: number[] = [];
    const out = await settled(
      clock,
      s.write([post], 'first', async () => {
        sentAt.push(clock.now());
        if (sentAt.length === 1) throw new PlatformRateLimitedError(post.key, 5000);
        return {};
      }),
    );
    expect(out.error).toBeUndefined();
    expect(sentAt).toHaveLength(2);
    // Not inside the refused grant: after the platform's Retry-After.
    expect((sentAt[1] as number) - (sentAt[0] as number)).toBeGreaterThanOrEqual(5000);
    expect(s.budget(post.key)?.learned).toBe(true); // the 429 taught the bucket
  });

  it('gives up after `attempts` 429s and throws the last', async () => {
    const { clock, s } = setup();
    let sends = 0;
    const out = await settled(
      clock,
      s.write(
        [post],
        'final',
        async () => {
          sends++;
          throw new PlatformRateLimitedError(post.key, 100);
        },
        { attempts: 2 },
      ),
    );
    expect(out.error).toBeInstanceOf(PlatformRateLimitedError);
    expect(sends).toBe(2);
  });

  it('reports any other error and rethrows it, once', async () => {
    const { clock, s } = setup();
    let sends = 0;
    const boom = new Error('channel_not_found');
    const out = await settled(
      clock,
      s.write([post], 'first', async () => {
        sends++;
        throw boom;
      }),
    );
    expect(out.error).toBe(boom);
    expect(sends).toBe(1);
    // The grant was done (nothing waits), and its token stays spent: the next write waits a refill.
    expect(s.stats().waiting).toBe(0);
    let next: number | undefined;
    void s.write([post], 'first', async () => void (next = clock.now()));
    await clock.settle();
    expect(next).toBeUndefined();
    await clock.advanceUntil(() => next !== undefined, 5000);
    expect(next).toBeDefined();
  });

  it('an abort while waiting for a grant rejects with its reason, and nothing is sent', async () => {
    const { clock, s } = setup();
    await s.write([post], 'first', async () => ({})); // spends the one token
    const stop = new AbortController();
    let sent = false;
    const p = s.write([post], 'edit', async () => void (sent = true), { signal: stop.signal });
    const reason = new Error('reply cancelled');
    stop.abort(reason);
    const out = await settled(clock, p);
    expect(out.error).toBe(reason);
    expect(sent).toBe(false);
  });

  it('forParty names the party: writes of one priority are served in turn by party', async () => {
    const { clock, s } = setup();
    await s.write([post], 'first', async () => ({})); // the bucket is empty now
    const order: string[] = [];
    const flood = forParty(s, 'flood');
    const writes = [
      flood.write([post], 'first', async () => void order.push('flood 1')),
      flood.write([post], 'first', async () => void order.push('flood 2')),
      forParty(s, 'other').write([post], 'first', async () => void order.push('other')),
    ];
    await settled(clock, Promise.all(writes));
    expect(order).toEqual(['flood 1', 'other', 'flood 2']);
  });
});
