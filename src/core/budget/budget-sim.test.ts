import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { FakeRateLimiter } from '../../../test/fakes/slack/rate-limiter.js';
import { RATE_MODEL_NAMES, rateModel } from '../../../test/fakes/slack/rate-models.js';
import { DEFAULT_SLACK_LIMITS, postBucket, updateBucket } from '../../connectors/slack/rate-limits.js';
import type { BucketRef } from '../ports.js';
import { RateLimitScheduler, type WritePriority } from './scheduler.js';

// Ten simulated minutes of 20 live replies in one Slack workspace (5 channels), with the Slack
// connector's default buckets, against every guess at Slack's unpublished algorithm the fake
// knows (rate-models.ts). Each reply posts, reserves its final, edits about once a second for 10-40 s,
// ends with a final update and is followed by the next one. Whatever the shape, the scheduler
// must learn it within a couple of 429s per platform bucket, and every reply must end.

const TEAM = 'T1';
const CHANNELS = 5;
const REPLIES = 20;
const MIN = 60_000;

async function simulate(name: (typeof RATE_MODEL_NAMES)[number]) {
  const clock = new ManualClock();
  const limiter = new FakeRateLimiter(rateModel(name), () => clock.now());
  const s = new RateLimitScheduler({ clock });
  let stopped = false;
  let finals = 0;
  let edits = 0;
  const finalWaits: number[] = [];
  const sleep = (ms: number) => new Promise<void>((r) => clock.setTimeout(r, ms));

  /** One write through the scheduler and the fake's limiter; true when accepted. */
  async function write(
    method: string,
    channel: string,
    bucket: BucketRef,
    priority: WritePriority,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const grant = await s.acquire([bucket], priority, signal);
    const d = limiter.decide(method, TEAM, channel);
    if (d.ok) {
      grant.done({ ok: true });
      return true;
    }
    grant.done({ ok: false, rateLimited: { retryAfterMs: d.retryAfterS * 1000, bucket: bucket.key } });
    return false;
  }

  async function reply(slot: number): Promise<void> {
    const channel = `C${slot % CHANNELS}`;
    const post = postBucket(DEFAULT_SLACK_LIMITS, TEAM, channel);
    const update = updateBucket(DEFAULT_SLACK_LIMITS, TEAM);
    for (let n = 0; !stopped; n++) {
      while (!(await write('chat.postMessage', channel, post, 'first'))) {
        // refused: again when the scheduler allows
      }
      const release = s.reserve([update]);
      const end = clock.now() + 10_000 + ((slot * 7919 + n * 3571) % 30_000);
      while (clock.now() < end) {
        await sleep(1000);
        // an edit still waiting when the reply ends is dropped (the final carries its text)
        const ac = new AbortController();
        const t = clock.setTimeout(() => ac.abort(new Error('ended')), Math.max(0, end - clock.now()));
        try {
          if (await write('chat.update', channel, update, 'edit', ac.signal)) edits++;
        } catch {
          // dropped
        } finally {
          t.clear();
        }
      }
      const asked = clock.now();
      while (!(await write('chat.update', channel, update, 'final'))) {
        // refused: again when the scheduler allows
      }
      finalWaits.push(clock.now() - asked);
      finals++;
      release();
    }
  }

  const loops = Array.from({ length: REPLIES }, (_, i) => reply(i).catch(() => {}));
  // in steps of a second, so that every chain a timer wakes settles before time moves far
  for (let t = 0; t < 10 * MIN; t += 1000) await clock.advance(1000);
  // let the replies under way end (none starts after this), then count
  stopped = true;
  let ended = false;
  void Promise.all(loops).then(() => (ended = true));
  for (let t = 0; t < 2 * MIN && !ended; t += 1000) await clock.advance(1000);
  s.close(new Error('end of simulation'));
  await Promise.all(loops);
  return { hits: limiter.hitsByBucket, finals, edits, finalWaits, ended };
}

describe('learned budgets: 20 replies for 10 minutes against each Slack rate model', () => {
  for (const name of RATE_MODEL_NAMES) {
    it(`${name}: at most 2 429s per platform bucket, every reply ends`, async () => {
      const r = await simulate(name);
      expect(r.ended, name).toBe(true);
      // 20 replies of 10-40 s for 10 minutes: hundreds of finals (the update budget of one
      // workspace goes to the finals of 20 live replies; their edits mostly wait)
      expect(r.finals, name).toBeGreaterThan(100);
      for (const [bucket, n] of Object.entries(r.hits)) expect(n, `${name} ${bucket}`).toBeLessThanOrEqual(2);
    }, 60_000);
  }
});
