import { webApi } from '@slack/bolt';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { type FakeSlack, startFakeSlack } from '../../../test/fakes/slack/index.js';
import { RateLimitScheduler } from '../../core/budget/scheduler.js';
import { silentLogger } from '../../logger.js';
import { Greetings, greetOnce } from './agent-home.js';
import { clientOptions } from './app.js';
import { GREETING } from './assistant.js';
import { HistoryReads, type ReadScheduler } from './history-reads.js';
import { DEFAULT_SLACK_LIMITS } from './rate-limits.js';

// The Messages tab greeting looks at the DM's history through the workspace's history bucket:
// through a real WebClient against the fake Slack and the real scheduler.

let fake: FakeSlack;
let client: webApi.WebClient;
beforeEach(async () => {
  fake = await startFakeSlack({ chaos: false });
  client = new webApi.WebClient(fake.botToken, clientOptions(fake.apiUrl));
});
afterEach(() => fake.close());

function recording(scheduler: RateLimitScheduler): { paid: string[]; reads: ReadScheduler } {
  const paid: string[] = [];
  return {
    paid,
    reads: {
      write: (buckets, priority, send, opts) => {
        paid.push(...buckets.map((b) => b.key));
        return scheduler.write(buckets, priority, send, opts);
      },
    },
  };
}

const where = { team: 'T0FAKE', user: 'U0NEW', channel: 'D0NEW' };
const historyCalls = () => fake.calls.filter((c) => c.method === 'conversations.history');

it('a first open: the look at the DM is paid from the history bucket, and the user sees the greeting', async () => {
  const { paid, reads } = recording(new RateLimitScheduler({ clock: new ManualClock() }));
  const r = await greetOnce(
    client,
    new Greetings(),
    where,
    silentLogger,
    new HistoryReads(DEFAULT_SLACK_LIMITS, reads),
  );
  expect(r).toBe('greeted');
  expect([...fake.messages('D0NEW').values()]).toEqual([GREETING]);
  expect(paid).toEqual(['slack:T0FAKE:history']);
  expect(historyCalls()).toHaveLength(1);
});

it('when the history budget cannot pay within the wait, no look and no greeting (never a repeat)', async () => {
  const clock = new ManualClock();
  const { reads } = recording(new RateLimitScheduler({ clock }));
  const limits = { ...DEFAULT_SLACK_LIMITS, history: { limit: 1, windowMs: 60_000 } };
  const history = new HistoryReads(limits, reads, 50);
  // Another read spent the bucket's one call of the minute.
  await history.read('T0FAKE', () => Promise.resolve(undefined));
  const r = await greetOnce(client, new Greetings(), where, silentLogger, history);
  expect(r).toBe('known');
  expect(historyCalls()).toHaveLength(0);
  expect([...fake.messages('D0NEW').values()]).toEqual([]);
});
