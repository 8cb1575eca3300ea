import { expect, it } from 'vitest';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { noopMetrics } from '../metrics-port.js';
import type { BucketRef, ReplySink } from '../ports.js';
import { RateLimitScheduler } from './scheduler.js';
import { type StreamMode, WritePacer } from '../reply/write-pacer.js';

// Two ways many replies starting at once used to spend what their finals needed (issue 13, the
// `strict` workspace: chat.update 20 a minute, burst 5, when the connector guesses 50):
// - replies chose to stream before the first of them had posted, so none counted the others'
//   finals; a reply's final is now reserved the moment it chooses to stream;
// - intermediate edits were paid by a guessed refill that never came; a per-minute bucket's rate
//   is now counted on only once a 429 (or a header) confirmed it.

const MIN = 60_000;
const UPDATE: BucketRef = { key: 'slack:T1:update', limit: 50, windowMs: MIN };
const SHORT: BucketRef = { key: 'test:channel:C1', limit: 5, windowMs: 5_000 };

function pacer(scheduler: RateLimitScheduler, bucket: BucketRef): WritePacer {
  const sink = { buckets: () => [bucket] } as unknown as ReplySink; // the pacer reads only buckets()
  return new WritePacer({ sink, scheduler, platform: 'slack', metrics: noopMetrics });
}

/** A new reply's pacer chooses its mode: which one. */
function chosenMode(scheduler: RateLimitScheduler, bucket: BucketRef): StreamMode | undefined {
  const p = pacer(scheduler, bucket);
  p.chooseMode();
  return p.mode;
}

it('replies choosing at once before any posted: only as many stream as the burst can pay finals for', () => {
  const clock = new ManualClock();
  const scheduler = new RateLimitScheduler({ clock });
  const modes = Array.from({ length: 8 }, () => chosenMode(scheduler, UPDATE));
  const streaming = modes.filter((m) => m === 'stream').length;
  expect(streaming).toBe(scheduler.budget(UPDATE.key)?.burst);
  expect(modes.slice(streaming).every((m) => m === 'post-once')).toBe(true);
});

it('a per-minute bucket whose reserved finals fill its burst lets no intermediate edit pay by a guessed refill', async () => {
  const clock = new ManualClock();
  const scheduler = new RateLimitScheduler({ clock });
  scheduler.reserve([UPDATE]);
  const burst = scheduler.budget(UPDATE.key)?.burst ?? 0;
  expect(burst).toBeGreaterThan(1);
  for (let i = 1; i < burst; i++) scheduler.reserve([UPDATE]);
  let edited = false;
  const edit = scheduler.acquire([UPDATE], 'edit').then((g) => ((edited = true), g));
  await clock.advance(30_000);
  expect(edited).toBe(false);
  // Every reserved final still leaves at once.
  for (let i = 0; i < burst; i++) (await scheduler.acquire([UPDATE], 'final')).done();
  expect(edited).toBe(false);
  scheduler.close();
  await edit.catch(() => undefined);
});

it('once the platform took a whole window at the assumed rate, edits pay by refill again', async () => {
  const clock = new ManualClock();
  const scheduler = new RateLimitScheduler({ clock });
  // A busy minute: a write whenever the bucket allows, every one accepted.
  for (let i = 0; i < 60; i++) {
    const g = scheduler.acquire([UPDATE], 'final');
    let done = false;
    void g.then((x) => (x.done(), (done = true)));
    await clock.advanceUntil(() => done, 10_000, 100);
  }
  const burst = scheduler.budget(UPDATE.key)?.burst ?? 0;
  for (let i = 0; i < burst; i++) scheduler.reserve([UPDATE]);
  let edited = false;
  void scheduler.acquire([UPDATE], 'edit').then((g) => ((edited = true), g.done()));
  await clock.advanceUntil(() => edited, 30_000, 100);
  expect(edited).toBe(true);
  scheduler.close();
});

it("a short window pays many finals within the horizon: 20 replies at once all stream on a bot's 50 a second", () => {
  const clock = new ManualClock();
  const scheduler = new RateLimitScheduler({ clock });
  const BOT: BucketRef = { key: 'discord:bot', limit: 50, windowMs: 1_000 };
  const modes = Array.from({ length: 20 }, () => chosenMode(scheduler, BOT));
  expect(modes.every((m) => m === 'stream')).toBe(true);
});

it('a short window (paced at its rate from the start) still pays edits by refill', async () => {
  const clock = new ManualClock();
  const scheduler = new RateLimitScheduler({ clock });
  scheduler.reserve([SHORT]);
  let granted = 0;
  for (let i = 0; i < 3; i++) {
    const g = scheduler.acquire([SHORT], 'edit').then((x) => (granted++, x.done()));
    await clock.advanceUntil(() => granted > i, 20_000, 50);
    await g;
  }
  expect(granted).toBe(3);
  scheduler.close();
});
