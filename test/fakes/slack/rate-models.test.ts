import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../manual-clock.js';
import { type FakeSlack, startFakeSlack } from './index.js';
import { FakeRateLimiter } from './rate-limiter.js';
import {
  floorMs,
  RATE_MODEL_NAMES,
  type RateModel,
  type RateModelName,
  rateModel,
  resolveRateModel,
} from './rate-models.js';

// The fake's rate-limit models, driven by a manual clock: what each accepts and refuses, that
// Retry-After is exact enough to retry on, that refusals cost nothing, and the floor function.

const T = 'T1';
const MINUTE = 60_000;
// A start on a minute boundary, so fixed windows are easy to reason about.
const START = 28_000_000 * MINUTE;

function rig(model: RateModelName | RateModel, start = START) {
  const clock = new ManualClock(start);
  const limiter = new FakeRateLimiter(typeof model === 'string' ? rateModel(model) : model, () => clock.now());
  const call = (method: string, channel = 'C1') => limiter.decide(method, T, channel);
  /** Makes n calls now; returns how many were accepted. */
  const burst = (n: number, method: string, channel = 'C1') =>
    Array.from({ length: n }, () => call(method, channel)).filter((d) => d.ok).length;
  const retryAfter = (method: string, channel = 'C1'): number => {
    const d = call(method, channel);
    if (d.ok) throw new Error(`${method} was accepted`);
    return d.retryAfterS;
  };
  return { clock, limiter, call, burst, retryAfter };
}

describe('current (default)', () => {
  it('is what a fake without options enforces', () => {
    const m = resolveRateModel({}, {});
    expect(m.name).toBe('current');
    expect(Object.keys(m.rules)).toEqual(['chat.postMessage', 'chat.startStream', 'chat.update', 'chat.appendStream']);
  });

  it('opens a window with the first call and ends it 100 ms early', async () => {
    const r = rig('current', START + 12_345);
    expect(r.burst(50, 'chat.update')).toBe(50);
    expect(r.retryAfter('chat.update')).toBe(60);
    await r.clock.advance(59_899);
    expect(r.call('chat.update').ok).toBe(false);
    await r.clock.advance(1);
    expect(r.burst(51, 'chat.update')).toBe(50);
    expect(r.burst(2, 'chat.postMessage')).toBe(1);
    expect(r.retryAfter('chat.postMessage')).toBe(1);
    await r.clock.advance(900);
    expect(r.call('chat.postMessage').ok).toBe(true);
  });

  it('keeps explicit limits, and {} turns limits off even when the env var names a model', () => {
    const env = { FAKE_SLACK_RATE_MODEL: 'strict' };
    expect(resolveRateModel({ limits: {} }, env).rules).toEqual({});
    const m = resolveRateModel({ limits: { 'chat.update': { limit: 3, windowMs: 1000, per: 'team' } } }, env);
    expect(rig(m).burst(5, 'chat.update')).toBe(3);
  });
});

describe('token', () => {
  it('lets a burst of 20 updates through, then one per 1.2 s', async () => {
    const r = rig('token');
    expect(r.burst(25, 'chat.update')).toBe(20);
    expect(r.limiter.waitMs('chat.update', T, 'C1')).toBe(1200);
    expect(r.retryAfter('chat.update')).toBe(2);
    await r.clock.advance(1199);
    expect(r.call('chat.update').ok).toBe(false);
    await r.clock.advance(1);
    expect(r.call('chat.update').ok).toBe(true);
    // Sustained: 50 more over the next minute, no more.
    let ok = 0;
    for (let i = 0; i < 600; i++) {
      await r.clock.advance(100);
      if (r.call('chat.update', `C${i}`).ok) ok++;
    }
    expect(ok).toBe(50);
  });

  it('lets 3 posts per channel through at once, then one per second, each channel on its own', async () => {
    const r = rig('token');
    expect(r.burst(5, 'chat.postMessage', 'C1')).toBe(3);
    expect(r.burst(5, 'chat.postMessage', 'C2')).toBe(3);
    expect(r.retryAfter('chat.postMessage', 'C1')).toBe(1);
    await r.clock.advance(1000);
    expect(r.burst(3, 'chat.postMessage', 'C1')).toBe(1);
  });

  it('limits appendStream like chat.update and startStream like posts, in their own buckets', () => {
    const r = rig('token');
    expect(r.burst(20, 'chat.update')).toBe(20);
    expect(r.burst(25, 'chat.appendStream')).toBe(20);
    expect(r.burst(3, 'chat.postMessage')).toBe(3);
    expect(r.burst(5, 'chat.startStream')).toBe(3);
    expect(r.burst(5, 'chat.stopStream')).toBe(5);
  });
});

describe('fixed-window', () => {
  it('counts updates per clock minute, so 100 can pass around a boundary', async () => {
    const r = rig('fixed-window', START + 59_000);
    expect(r.burst(60, 'chat.update')).toBe(50);
    expect(r.retryAfter('chat.update')).toBe(1);
    await r.clock.advance(999);
    expect(r.call('chat.update').ok).toBe(false);
    await r.clock.advance(1);
    expect(r.burst(60, 'chat.update')).toBe(50);
    expect(r.retryAfter('chat.update')).toBe(60);
  });

  it('counts posts per clock second and channel', async () => {
    const r = rig('fixed-window', START + 700);
    expect(r.burst(3, 'chat.postMessage', 'C1')).toBe(1);
    expect(r.burst(3, 'chat.postMessage', 'C2')).toBe(1);
    expect(r.limiter.waitMs('chat.postMessage', T, 'C1')).toBe(300);
    expect(r.retryAfter('chat.postMessage')).toBe(1);
    await r.clock.advance(300);
    expect(r.burst(3, 'chat.postMessage', 'C1')).toBe(1);
  });
});

describe('sliding-log', () => {
  it('allows 50 updates in any trailing minute', async () => {
    const r = rig('sliding-log', START + 59_000);
    for (let i = 0; i < 50; i++) {
      expect(r.call('chat.update').ok).toBe(true);
      await r.clock.advance(100);
    }
    // Unlike aligned windows, the minute boundary (at +1 s) frees nothing.
    await r.clock.advance(5000);
    expect(r.limiter.waitMs('chat.update', T, 'C1')).toBe(60_000 - 10_000);
    expect(r.retryAfter('chat.update')).toBe(50);
    await r.clock.advance(49_999);
    expect(r.call('chat.update').ok).toBe(false);
    await r.clock.advance(1);
    expect(r.burst(2, 'chat.update')).toBe(1);
    await r.clock.advance(100);
    expect(r.burst(2, 'chat.update')).toBe(1);
  });

  it('allows one post per channel in any trailing second', async () => {
    const r = rig('sliding-log', START + 999);
    expect(r.burst(2, 'chat.postMessage', 'C1')).toBe(1);
    await r.clock.advance(500);
    expect(r.call('chat.postMessage', 'C2').ok).toBe(true);
    expect(r.retryAfter('chat.postMessage', 'C1')).toBe(1);
    await r.clock.advance(499);
    expect(r.call('chat.postMessage', 'C1').ok).toBe(false);
    await r.clock.advance(1);
    expect(r.call('chat.postMessage', 'C1').ok).toBe(true);
  });
});

describe('strict', () => {
  it('allows a burst of 5 updates, then one per 3 s; posts one per second', async () => {
    const r = rig('strict');
    expect(r.burst(8, 'chat.update')).toBe(5);
    expect(r.retryAfter('chat.update')).toBe(3);
    expect(r.burst(2, 'chat.postMessage')).toBe(1);
    await r.clock.advance(3000);
    expect(r.burst(3, 'chat.update')).toBe(1);
    expect(r.burst(3, 'chat.postMessage')).toBe(1);
  });
});

describe('per-channel', () => {
  it('adds 10/min burst 3 per channel on top of the workspace bucket', async () => {
    const r = rig('per-channel');
    expect(r.burst(3, 'chat.update', 'C1')).toBe(3);
    const d = r.call('chat.update', 'C1');
    expect(d).toMatchObject({ ok: false, retryAfterS: 6, bucket: 'chat.update#channel:T1:C1' });
    // Refusals on C1 cost the workspace nothing: 17 more fit on other channels, not 18.
    for (let i = 0; i < 10; i++) expect(r.call('chat.update', 'C1').ok).toBe(false);
    let ok = 0;
    for (let c = 2; c <= 7; c++) ok += r.burst(3, 'chat.update', `C${c}`);
    expect(ok).toBe(17);
    expect(r.call('chat.update', 'C9')).toMatchObject({ ok: false, retryAfterS: 2, bucket: 'chat.update:T1' });
    expect(r.limiter.hitsByBucket).toEqual({ 'chat.update#channel:T1:C1': 11, 'chat.update:T1': 2 });
    expect(r.limiter.hitsByMethod).toEqual({ 'chat.update': 13 });
    await r.clock.advance(6000);
    expect(r.call('chat.update', 'C1').ok).toBe(true);
  });

  it('takes other numbers', () => {
    const r = rig(rateModel('per-channel', { channelUpdate: { limit: 60, burst: 1 }, update: { burst: 100 } }));
    expect(r.burst(3, 'chat.update', 'C1')).toBe(1);
    expect(r.retryAfter('chat.update', 'C1')).toBe(1);
  });
});

describe('every model', () => {
  const cases = RATE_MODEL_NAMES.flatMap((name) =>
    ['chat.postMessage', 'chat.update', 'chat.startStream', 'chat.appendStream'].map((m) => [name, m] as const),
  );

  it.each(cases)('%s %s: a retry after Retry-After succeeds, and refusals cost nothing', async (name, method) => {
    const r = rig(name, START + 437);
    let accepted = 0;
    for (let round = 0; round < 3; round++) {
      while (r.call(method).ok) accepted++;
      expect(accepted).toBeGreaterThan(0);
      const wait = r.limiter.waitMs(method, T, 'C1');
      const ra = r.retryAfter(method);
      expect(ra).toBe(Math.max(1, Math.ceil(wait / 1000)));
      // Hammering while refused must not push the retry later.
      for (let i = 0; i < 200; i++) expect(r.call(method).ok).toBe(false);
      await r.clock.advance(wait - 1);
      expect(r.call(method).ok).toBe(false);
      await r.clock.advance(ra * 1000 - wait + 1);
      expect(r.call(method).ok).toBe(true);
      accepted = 1;
    }
  });

  it('is chosen by FAKE_SLACK_RATE_MODEL, and a typo throws', () => {
    for (const name of RATE_MODEL_NAMES) {
      expect(resolveRateModel({}, { FAKE_SLACK_RATE_MODEL: name }).name).toBe(name);
    }
    expect(resolveRateModel({ rateModel: 'token' }, { FAKE_SLACK_RATE_MODEL: 'strict' }).name).toBe('token');
    expect(() => resolveRateModel({}, { FAKE_SLACK_RATE_MODEL: 'tokens' })).toThrow(/expected one of/);
  });
});

describe('floorMs', () => {
  const at = (channel: string, endAt: number, posts?: number) => ({ channel, endAt, ...(posts ? { posts } : {}) });
  const same = (n: number, channel = 'C1', endAt = START) => Array.from({ length: n }, () => at(channel, endAt));

  it('is the start for no replies, and never before a reply ends', () => {
    expect(floorMs(rateModel('token'), [], START)).toBe(START);
    expect(floorMs(rateModel('token'), [at('C1', START - 5000)], START)).toBe(START);
    expect(floorMs(rateModel('token'), [at('C1', START), at('C1', START + 7000)], START)).toBe(START + 7000);
  });

  it('follows each model’s post budget per channel', () => {
    expect(floorMs(rateModel('token'), same(5), START)).toBe(START + 2000);
    expect(floorMs(rateModel('token'), [...same(3, 'C1'), ...same(3, 'C2')], START)).toBe(START);
    expect(floorMs(rateModel('token'), [at('C1', START, 5)], START)).toBe(START + 2000);
    expect(floorMs(rateModel('current'), same(3), START)).toBe(START + 1800);
    expect(floorMs(rateModel('fixed-window'), same(3), START + 500)).toBe(START + 2000);
    expect(floorMs(rateModel('sliding-log'), same(3), START + 500)).toBe(START + 2500);
    expect(floorMs(rateModel('strict'), same(2), START)).toBe(START + 1000);
    expect(floorMs(rateModel('per-channel'), same(4), START)).toBe(START + 1000);
  });

  it('serves replies as they end, first come first served', () => {
    // Token: burst of 3 spent at START; later ends find the bucket refilled in between.
    const replies = [...same(3), at('C1', START + 500), at('C1', START + 4000), at('C1', START + 4000)];
    // +1000 (500 waits for a token), +4000 (refilled), +4000 (second of two refilled tokens).
    expect(floorMs(rateModel('token'), replies, START)).toBe(START + 4000);
    // One per second: START, +1000, +2000, then +3000 (ended at +500), +4000, +5000.
    expect(floorMs(rateModel('sliding-log'), replies, START)).toBe(START + 5000);
  });

  it('takes no limit as no floor beyond the last end', () => {
    expect(floorMs({ name: 'none', rules: {} }, same(10, 'C1', START + 3), START)).toBe(START + 3);
  });
});

describe('the fake Slack server', () => {
  let fake: FakeSlack | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it('answers 429 with Retry-After and logs every write with its outcome', async () => {
    const clock = new ManualClock(START + 250);
    fake = await startFakeSlack({ rateModel: 'strict', now: () => clock.now() });
    const f = fake;
    const api = async (method: string, body: Record<string, unknown>) => {
      const res = await fetch(`${f.apiUrl}${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${f.botToken}` },
        body: JSON.stringify(body),
      });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
    };
    const first = await api('chat.postMessage', { channel: 'C1', text: 'hello' });
    expect(first.status).toBe(200);
    const ts = (first.body as { ts: string }).ts;
    const second = await api('chat.postMessage', { channel: 'C1', text: 'again' });
    expect(second).toEqual({ status: 429, retryAfter: '1', body: { ok: false, error: 'ratelimited' } });
    for (let i = 0; i < 5; i++) await api('chat.update', { channel: 'C1', ts, text: `v${i}` });
    const limited = await api('chat.update', { channel: 'C1', ts, text: 'v5 longer' });
    expect(limited.status).toBe(429);
    expect(limited.retryAfter).toBe('3');
    await clock.advance(3000);
    expect((await api('chat.update', { channel: 'C1', ts, text: 'final' })).status).toBe(200);

    expect(f.rateModel.name).toBe('strict');
    expect(f.rateLimitHits).toBe(2);
    expect(f.rateLimitHitsByMethod).toEqual({ 'chat.postMessage': 1, 'chat.update': 1 });
    expect(f.rateLimitHitsByBucket).toEqual({ 'chat.postMessage:T0FAKE:C1': 1, 'chat.update:T0FAKE': 1 });
    expect(f.message('C1', ts)?.text).toBe('final');
    const log = f.writeLog.map((w) => [w.at - START, w.method, w.ts, w.textLength, w.accepted, w.retryAfterS]);
    expect(log).toEqual([
      [250, 'chat.postMessage', ts, 5, true, undefined],
      [250, 'chat.postMessage', undefined, 5, false, 1],
      ...[0, 1, 2, 3, 4].map(() => [250, 'chat.update', ts, 2, true, undefined]),
      [250, 'chat.update', ts, 9, false, 3],
      [3250, 'chat.update', ts, 5, true, undefined],
    ]);
    expect(f.writeLog[1]).toMatchObject({
      team: 'T0FAKE',
      channel: 'C1',
      result: 'ratelimited',
      bucket: 'chat.postMessage:T0FAKE:C1',
    });
  });
});
