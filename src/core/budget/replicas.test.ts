import { describe, expect, it } from 'vitest';
import { MemoryBudgetStore } from '../../../test/fakes/budget-store.js';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { type Bucket, makeBucket, type RateRule } from '../../../test/fakes/slack/rate-buckets.js';
import type { BucketRef, RateLimitInfo } from '../ports.js';
import { RateLimitScheduler, shareOf, type WriteGrant, type WriteOutcome } from './scheduler.js';

// Several replicas sharing one workspace's (or one bot's) buckets: each scheduler spends its share
// (1 / live replicas), so together they stay within the platform's bucket; what one learns reaches
// the others through the store. Time is a ManualClock; the platform answers each write at once.

const MIN = 60_000;
const UPDATE: BucketRef = { key: 'slack:T1:update', limit: 50, windowMs: MIN };
/** The token model of the fake Slack (rate-models.ts): 50 a minute, a burst of 20. */
const TOKEN_RULE: RateRule = { kind: 'token', limit: 50, windowMs: MIN, burst: 20, per: 'team' };

/** One platform bucket that every replica writes into, answering like Slack. */
class SharedPlatform {
  readonly bucket: Bucket;
  accepted = 0;
  readonly limited: number[] = [];
  constructor(
    private readonly clock: ManualClock,
    rule: RateRule,
  ) {
    this.bucket = makeBucket(rule, clock.now());
  }

  answer(grant: WriteGrant): void {
    const now = this.clock.now();
    const wait = this.bucket.waitMs(now);
    if (wait === 0) {
      this.bucket.take(now);
      this.accepted++;
      grant.done({ ok: true });
      return;
    }
    this.limited.push(now);
    grant.done({ ok: false, rateLimited: { retryAfterMs: Math.max(1, Math.ceil(wait / 1000)) * 1000 } });
  }
}

/** A replica writing flat out: `loops` writers that write again as soon as an answer came. */
function replica(
  s: RateLimitScheduler,
  loops: number,
  bucket: BucketRef,
  answer: (g: WriteGrant) => void,
): { writes: () => number; stop(): Promise<unknown> } {
  let stopped = false;
  let writes = 0;
  const all = Array.from({ length: loops }, async () => {
    while (!stopped) {
      const g = await s.acquire([bucket], 'edit');
      if (stopped) return g.done();
      writes++;
      answer(g);
    }
  });
  return {
    writes: () => writes,
    stop: () => {
      stopped = true;
      s.close(new Error('replica stopped'));
      return Promise.allSettled(all);
    },
  };
}

/** One write through `s`, time moving (in steps) until the scheduler grants it. */
async function write(clock: ManualClock, s: RateLimitScheduler, bucket: BucketRef, outcome: WriteOutcome) {
  let grant: WriteGrant | undefined;
  void s.acquire([bucket], 'edit').then((g) => (grant = g));
  await clock.advanceUntil(() => grant !== undefined, 10 * MIN, 100);
  if (grant === undefined) throw new Error('never granted');
  grant.done(outcome);
}

const OK: WriteOutcome = { ok: true };
const limited = (retryAfterMs: number): WriteOutcome => ({ ok: false, rateLimited: { retryAfterMs } });

describe('shared budgets: replicas splitting a bucket', () => {
  it('two replicas at share 1/2 writing flat out: 0 429s, and together most of the bucket', async () => {
    const clock = new ManualClock();
    const p = new SharedPlatform(clock, TOKEN_RULE);
    const schedulers = [0, 1].map(() => new RateLimitScheduler({ clock }));
    for (const s of schedulers) s.setShare(shareOf(2));
    const rs = schedulers.map((s) => replica(s, 5, UPDATE, (g) => p.answer(g)));
    // Three minutes: the learned rate grows 5% a minute under pressure and would probe past the
    // platform's 50/min in the fourth, as a lone replica does (learning.test.ts).
    await clock.advance(3 * MIN);
    await Promise.all(rs.map((r) => r.stop()));
    expect(p.limited).toEqual([]);
    // The platform could take its burst and 50 a minute: 170 in three minutes.
    const capacity = 20 + 3 * 50;
    expect(p.accepted / capacity).toBeGreaterThanOrEqual(0.8);
    // Each took about half.
    const [a, b] = rs.map((r) => r.writes()) as [number, number];
    expect(Math.abs(a - b)).toBeLessThanOrEqual(2);
    expect(schedulers[0]?.budget(UPDATE.key)?.mine.burst).toBe(2); // of the default burst 4
  });

  it('the same two replicas each at share 1 (no sharing) meet 429s: the share is what keeps them within', async () => {
    const clock = new ManualClock();
    const p = new SharedPlatform(clock, TOKEN_RULE);
    const rs = [0, 1].map(() => replica(new RateLimitScheduler({ clock }), 5, UPDATE, (g) => p.answer(g)));
    await clock.advance(3 * MIN);
    await Promise.all(rs.map((r) => r.stop()));
    expect(p.limited.length).toBeGreaterThan(0);
  });

  it('three replicas, then one leaves: the other two rebalance from 1/3 to 1/2 and take up its part', async () => {
    const clock = new ManualClock();
    const p = new SharedPlatform(clock, TOKEN_RULE);
    const schedulers = [0, 1, 2].map(() => new RateLimitScheduler({ clock }));
    for (const s of schedulers) s.setShare(shareOf(3));
    const rs = schedulers.map((s) => replica(s, 4, UPDATE, (g) => p.answer(g)));
    await clock.advance(MIN);
    const firstMinute = p.accepted;
    expect(schedulers[0]?.budget(UPDATE.key)?.mine.burst).toBe(1); // a third of 4, at least one

    await (rs[2] as (typeof rs)[number]).stop(); // a rolling deploy: replica 3 is gone
    for (const s of schedulers.slice(0, 2)) s.setShare(shareOf(2)); // the next heartbeat sees two
    expect(schedulers[0]?.share).toBe(0.5);
    const before = p.accepted;
    await clock.advance(MIN);
    const secondMinute = p.accepted - before;
    await Promise.all(rs.slice(0, 2).map((r) => r.stop()));

    expect(p.limited).toEqual([]);
    // Two replicas at 1/2 write what three at 1/3 did (the bucket, not the replicas, is the limit).
    expect(firstMinute).toBeGreaterThanOrEqual(0.8 * 50);
    expect(secondMinute).toBeGreaterThanOrEqual(0.8 * 50);
    expect(schedulers[0]?.budget(UPDATE.key)?.mine.burst).toBe(2);
  });

  it('a 429 learned by replica A is saved at once and is in B’s budget after B’s sync', async () => {
    const clock = new ManualClock();
    const store = new MemoryBudgetStore();
    const a = new RateLimitScheduler({ clock, store });
    const b = new RateLimitScheduler({ clock, store });
    await Promise.all([a.restore(), b.restore()]);
    for (const s of [a, b]) s.setShare(shareOf(2));
    await write(clock, b, UPDATE, OK);
    const fresh = b.budget(UPDATE.key)?.perMinute as number;

    for (let i = 0; i < 3; i++) await write(clock, a, UPDATE, OK);
    await write(clock, a, UPDATE, limited(2000));
    const learned = a.budget(UPDATE.key);
    expect(learned?.perMinute).toBeLessThan(fresh);
    // Saved at once, not at the next save interval.
    await clock.settle();
    expect(store.rows.get(UPDATE.key)?.perMinute).toBeCloseTo(learned?.perMinute as number);
    expect(store.rows.get(UPDATE.key)?.limitedAt).toBe(clock.now());

    expect(b.budget(UPDATE.key)?.perMinute).toBe(fresh); // not yet
    await b.sync();
    expect(b.budget(UPDATE.key)?.perMinute).toBeCloseTo(learned?.perMinute as number);
    expect(b.budget(UPDATE.key)?.learned).toBe(true);
    // B applies its own share to the platform's bucket as learned.
    expect(b.budget(UPDATE.key)?.mine.perMinute).toBeCloseTo((learned?.perMinute as number) / 2);
    a.close();
    b.close();
  });

  it('sync merges by updatedAt: a newer local lesson stays, an older stored row does not replace it', async () => {
    const clock = new ManualClock();
    const store = new MemoryBudgetStore();
    const a = new RateLimitScheduler({ clock, store });
    const b = new RateLimitScheduler({ clock, store });
    await write(clock, a, UPDATE, limited(1000));
    const aLesson = a.budget(UPDATE.key)?.perMinute as number;
    await clock.advance(5000);
    // B learns later (and after more accepted writes): its row is newer and wins in the store.
    for (let i = 0; i < 6; i++) await write(clock, b, UPDATE, OK);
    await write(clock, b, UPDATE, limited(1000));
    const bLesson = b.budget(UPDATE.key)?.perMinute as number;
    await clock.settle();
    expect(store.rows.get(UPDATE.key)?.updatedAt).toBe(clock.now());

    await b.sync(); // its own row: nothing changes
    expect(b.budget(UPDATE.key)?.perMinute).toBe(bLesson);
    await a.sync(); // B's is newer than A's
    expect(a.budget(UPDATE.key)?.perMinute).toBeCloseTo(bLesson);
    expect(aLesson).not.toBeCloseTo(bLesson);

    // An old row saved late (a slow replica) loses to the newer one in the store.
    await store.save({ key: UPDATE.key, perMinute: 44, burst: 4, updatedAt: 1 });
    expect(store.rows.get(UPDATE.key)?.perMinute).toBeCloseTo(bLesson);
    a.close();
    b.close();
  });

  it('a store that fails: saves and syncs are reported, never thrown, and writes go on', async () => {
    const clock = new ManualClock();
    const store = new MemoryBudgetStore();
    store.fail = new Error('database down');
    const errors: unknown[] = [];
    const s = new RateLimitScheduler({ clock, store, onStoreError: (e) => errors.push(e) });
    await s.restore();
    await write(clock, s, UPDATE, limited(1000));
    await clock.settle();
    await s.sync();
    await s.flush();
    expect(errors).toHaveLength(3); // restore, the save of the 429, the sync
    expect(s.budget(UPDATE.key)?.learned).toBe(true); // the lesson is kept in memory
    let granted = false;
    void s.acquire([UPDATE], 'final').then(() => (granted = true));
    await clock.advance(10_000);
    expect(granted).toBe(true);
    s.close();
  });
});

describe('shared budgets: what a share scales', () => {
  it('share 1 changes nothing: the same grants as a scheduler that never heard of shares', async () => {
    const run = async (touch: boolean) => {
      const clock = new ManualClock();
      const p = new SharedPlatform(clock, { ...TOKEN_RULE, limit: 20, burst: 5 });
      const s = new RateLimitScheduler({ clock });
      if (touch) {
        s.setShare(0.5);
        s.setShare(1);
      }
      const times: number[] = [];
      const r = replica(s, 3, UPDATE, (g) => {
        times.push(clock.now());
        p.answer(g);
      });
      await clock.advance(5 * MIN);
      await r.stop();
      return { times, limited: p.limited, budget: s.budget(UPDATE.key) };
    };
    const [plain, touched] = await Promise.all([run(false), run(true)]);
    expect(touched).toEqual(plain);
    expect(plain.budget?.mine).toEqual({ perMinute: plain.budget?.perMinute, burst: plain.budget?.burst });
  });

  it('refuses a share outside (0, 1]', () => {
    const s = new RateLimitScheduler({ clock: new ManualClock() });
    for (const bad of [0, -0.5, 1.5, Number.NaN]) expect(() => s.setShare(bad), String(bad)).toThrow(RangeError);
    expect(shareOf(0)).toBe(1);
    expect(shareOf(4)).toBe(0.25);
  });

  it('a short bucket (Discord’s 40 of 50/s for replies) is paced at the share of its rate', async () => {
    const clock = new ManualClock();
    const global: BucketRef = { key: 'discord:global', limit: 40, windowMs: 1000 };
    const s = new RateLimitScheduler({ clock, marginMs: 0 });
    s.setShare(shareOf(2));
    let granted = 0;
    const r = replica(s, 10, global, (g) => {
      granted++;
      g.done({ ok: true });
    });
    await clock.advance(10_000);
    await r.stop();
    // 40/s for the bot; 20/s for this replica (the first grant is free)
    expect(granted).toBeLessThanOrEqual(20 * 10 + 1);
    expect(granted).toBeGreaterThanOrEqual(19 * 10);
  });

  it('headers: a limit and remaining counted per bot are shared too', async () => {
    const clock = new ManualClock();
    const channel: BucketRef = { key: 'discord:channel:1', limit: 5, windowMs: 5000 };
    const s = new RateLimitScheduler({ clock, marginMs: 0 });
    s.setShare(shareOf(2));
    const headers = (remaining: number): RateLimitInfo => ({
      bucket: channel.key,
      limit: 10,
      remaining,
      resetAfterMs: 5000,
    });
    (await s.acquire([channel], 'edit')).done({ ok: true, rateLimits: [headers(9)] });
    // The bot may write 10 per window: this replica's burst is 5; of 9 remaining, 4 are its own.
    expect(s.budget(channel.key)?.burst).toBe(10);
    expect(s.budget(channel.key)?.mine.burst).toBe(5);
    const at: number[] = [];
    for (let i = 0; i < 6; i++) void s.acquire([channel], 'edit').then(() => at.push(clock.now()));
    await clock.settle();
    expect(at).toHaveLength(4);
    // Then the window resets: the replica's share of a full bucket again.
    await clock.advance(5000);
    expect(at).toHaveLength(6);
    s.close();
  });
});
