import { describe, expect, it } from 'vitest';
import { refill, tokensReadyAt } from './tokens.js';
import * as learn from './learning.js';
import { BUDGET } from './budget-settings.js';
import { followHeaders } from './header-bucket.js';
import type { Learned } from './learning.js';

// The pure parts of a bucket: numbers in, numbers out, nothing kept (the inputs are frozen: a
// function that changed one would throw).

const MIN = BUDGET.minute;
const perMinute = { limit: 50, windowMs: MIN, marginMs: 3000 };

function fresh(now = 0, inFamily = false): Learned {
  return Object.freeze(learn.startLearning(perMinute, now, inFamily));
}

/** `s` after writes accepted at `times` (each logged as the Bucket does). */
function acceptedAt(s: Learned, times: number[]): Learned {
  return times.reduce((acc, t) => Object.freeze(learn.accepted(acc, t, acc.rate)), s);
}

describe('the token bucket', () => {
  it('refills at the rate up to the burst, and not before its time', () => {
    const t = Object.freeze({ tokens: 0, at: 1000 });
    expect(refill(t, 0.001, 4, 500)).toBe(t); // during a block: valued later, unchanged
    expect(refill(t, 0.001, 4, 3000)).toEqual({ tokens: 2, at: 3000 });
    expect(refill(t, 0.001, 4, 60_000)).toEqual({ tokens: 4, at: 60_000 });
  });

  it('says when the tokens a write needs are in hand', () => {
    expect(tokensReadyAt({ tokens: 1, at: 0 }, 0.001, 1, 10)).toBe(10);
    expect(tokensReadyAt({ tokens: 1, at: 500 }, 0.001, 1, 10)).toBe(500); // a block ends first
    expect(tokensReadyAt({ tokens: 0.5, at: 0 }, 0.001, 1, 10)).toBe(510);
  });
});

describe('the learning policy', () => {
  it('first guesses a window-safe bucket: a modest burst per minute, none for a short window', () => {
    expect(learn.firstGuess(perMinute)).toEqual({ rate: 47 / 63_000, burst: 4 });
    expect(learn.firstGuess({ limit: 1, windowMs: 1000, marginMs: 50 })).toEqual({ rate: 1 / 1050, burst: 1 });
  });

  it('shrinks after a 429 to what the platform accepted, at most 0.7x, and only once per shrink', () => {
    const s = acceptedAt(fresh(), [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10_000]);
    const r = learn.shrink(s, 11_000, 10_000, 1);
    expect(r.kind).toBe('shrunk');
    expect(r.s.rate).toBeCloseTo(Math.min(s.rate * BUDGET.shrink, (BUDGET.safety * 10) / 63_000));
    expect(r.s.burst).toBe(2); // half the burst
    expect(r.s.confirmedBurst).toBe(2);
    expect(r.s.rateAt429).toBe(s.rate);
    expect(r.s.dirty).toBe(true);
    // A write granted before that shrink was sent under the old numbers: no second cut.
    const again = learn.shrink(Object.freeze(r.s), 11_500, 10_500, 1);
    expect(again.kind).toBe('stale');
    expect(again.s.rate).toBe(r.s.rate);
    expect(again.s.lastLimitedAt).toBe(11_500);
  });

  it('grows a pressed bucket each quiet minute, never above maxGrowth x the first guess', () => {
    let s = fresh();
    expect(learn.grow(s, MIN / 2)).toBe(s); // not a minute yet
    expect(learn.grow(s, MIN).rate).toBe(s.rate); // no demand: no growth
    for (let m = 1; m <= 100; m++) s = Object.freeze(learn.grow(learn.pressed(s), m * MIN));
    expect(s.rate).toBeCloseTo(learn.firstGuess(perMinute).rate * BUDGET.maxGrowth);
    expect(s.proven).toBe(false); // a grown rate is a guess again
  });

  it('probes for a larger burst when room was wanted and a whole burst was accepted in one run', () => {
    const t = 20 * MIN;
    const s = acceptedAt(learn.wanted(fresh(), t - 1000), [t - 300, t - 200, t - 100, t]);
    const raised = learn.probe(s, t, 0);
    expect(raised?.added).toBe(3); // three quarters of 4 until the first 429 ever
    expect(raised?.s.burst).toBe(7);
    expect(raised?.s.confirmedBurst).toBe(4);
    expect(learn.probingUp(raised?.s as Learned)).toBe(true);
    // Not wanted: no probe. A refused probe falls back to the confirmed burst, rate untouched.
    expect(learn.probe(acceptedAt(fresh(), [t - 300, t - 200, t - 100, t]), t, 0)).toBeUndefined();
    const refused = learn.shrink(Object.freeze(raised?.s as Learned), t + 10, t + 5, 1);
    expect(refused.kind).toBe('probe');
    expect(refused.s.burst).toBe(4);
    expect(refused.s.rate).toBe(raised?.s.rate);
  });

  it('keeps a lesson of the confirmed numbers and restores it', () => {
    const s = learn.shrink(acceptedAt(fresh(), [1000, 2000, 3000, 4000, 5000]), 6000, 5000, 1).s;
    const l = learn.lesson(s, 'k', 7000);
    expect(l).toEqual({
      key: 'k',
      perMinute: s.rate * MIN,
      burst: s.confirmedBurst,
      updatedAt: 6000,
      limitedAt: 6000,
      limitedPerMinute: s.rateAt429 * MIN,
    });
    const back = learn.restore(fresh(), l, 8000);
    expect(back.rate).toBeCloseTo(s.rate);
    expect(back.burst).toBe(s.confirmedBurst);
    expect(back.dirty).toBe(false);
    expect(back.lastShrinkAt).toBe(6000);
  });
});

describe('the header bucket', () => {
  it('takes the platform’s limit over the window its headers show', () => {
    const h = followHeaders(undefined, { bucket: 'b', limit: 5, remaining: 4, resetAfterMs: 2000 }, perMinute);
    expect(h.limit).toBe(5);
    expect(h.windowMs).toBe(MIN); // a shorter reset does not shrink the window
    expect(h.rate).toBeCloseTo(5 / 63_000);
    const longer = followHeaders(
      Object.freeze(h),
      { bucket: 'b', resetAfterMs: 90_000 },
      { limit: 1, windowMs: 1000, marginMs: 3000 },
    );
    expect(longer.windowMs).toBe(90_000);
    expect(longer.rate).toBe(h.rate); // the limit did not change
  });
});
