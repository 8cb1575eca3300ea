import { webApi } from '@slack/bolt';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { type FakeSlack, startFakeSlack } from '../../../test/fakes/slack/index.js';
import { silentLogger } from '../../logger.js';
import { clientOptions } from './app.js';
import { RateLimitScheduler } from '../../core/budget/scheduler.js';
import { HistoryReads } from './history-reads.js';
import { ThreadMembership } from './thread-membership.js';
import { DEFAULT_SLACK_LIMITS } from './rate-limits.js';

// Thread membership through a real WebClient against the fake Slack: what is remembered per
// thread stays bounded (issue 31), the "no"s as well as the "yes"es.

let fake: FakeSlack;
let client: webApi.WebClient;
beforeEach(async () => {
  fake = await startFakeSlack();
  client = new webApi.WebClient(fake.botToken, clientOptions(fake.apiUrl));
});
afterEach(() => fake.close());

const bot = () => ({ userId: fake.botUserId, botId: fake.botId });

it('remembers at most maxEntries threads, "no" answers included, dropping the least recent first', async () => {
  const clock = new ManualClock();
  const threads = new ThreadMembership(silentLogger, () => clock.now(), 3);
  const asked: string[] = [];
  for (let i = 0; i < 5; i++) {
    const posted = fake.userPost({ channel: `C0T${i}`, user: 'U0SOMEONE', text: `hello ${i}` });
    asked.push(posted.ts);
    expect(
      await (threads.known('T0FAKE', `C0T${i}`, posted.ts) ??
        threads.ask(client, 'T0FAKE', `C0T${i}`, posted.ts, bot())),
    ).toBe(false);
    await clock.advance(1000);
    expect(threads.size).toBeLessThanOrEqual(3);
  }
  threads.mark('T0FAKE', 'C0MINE', '1.000001');
  expect(threads.size).toBe(3);
  // The newest "yes" is kept; the oldest "no"s went first.
  expect(
    await (threads.known('T0FAKE', 'C0MINE', '1.000001') ?? threads.ask(client, 'T0FAKE', 'C0MINE', '1.000001', bot())),
  ).toBe(true);
});

it('asks Slack again about a "no" after 5 minutes, not before (manual clock)', async () => {
  const clock = new ManualClock();
  const threads = new ThreadMembership(silentLogger, () => clock.now());
  const posted = fake.userPost({ channel: 'C0ASK', user: 'U0SOMEONE', text: 'hello' });
  expect(
    await (threads.known('T0FAKE', 'C0ASK', posted.ts) ?? threads.ask(client, 'T0FAKE', 'C0ASK', posted.ts, bot())),
  ).toBe(false);
  // The bot joins the thread; the remembered "no" holds for 5 minutes, then Slack is asked again.
  fake.userPost({ channel: 'C0ASK', user: 'U0SOMEONE', text: `<@${fake.botUserId}> there?`, threadTs: posted.ts });
  await clock.advance(5 * 60_000 - 1);
  expect(
    await (threads.known('T0FAKE', 'C0ASK', posted.ts) ?? threads.ask(client, 'T0FAKE', 'C0ASK', posted.ts, bot())),
  ).toBe(false);
  await clock.advance(1);
  expect(
    await (threads.known('T0FAKE', 'C0ASK', posted.ts) ?? threads.ask(client, 'T0FAKE', 'C0ASK', posted.ts, bot())),
  ).toBe(true);
  expect(threads.size).toBe(1);
});

it('asks for 15 messages a call, pages until the bot shows up, and pays every call from the history bucket', async () => {
  await fake.close();
  fake = await startFakeSlack({ cappedHistory: { perCall: 15, page: 'oldest-first' }, chaos: false });
  client = new webApi.WebClient(fake.botToken, clientOptions(fake.apiUrl));
  const scheduler = new RateLimitScheduler({ clock: new ManualClock() });
  const paid: string[] = [];
  // The real scheduler, noting which buckets each read was granted in.
  const reads = new HistoryReads(DEFAULT_SLACK_LIMITS, {
    write: (buckets, priority, send, opts) => {
      paid.push(...buckets.map((b) => b.key));
      return scheduler.write(buckets, priority, send, opts);
    },
  });
  const threads = new ThreadMembership(silentLogger, Date.now, 100, reads);
  const parent = fake.userPost({ channel: 'C0LONG', user: 'U0SOMEONE', text: 'a long thread' });
  for (let i = 0; i < 20; i++) {
    fake.userPost({ channel: 'C0LONG', user: 'U0SOMEONE', text: `reply ${i}`, threadTs: parent.ts });
  }
  fake.userPost({ channel: 'C0LONG', user: 'U0SOMEONE', text: `<@${fake.botUserId}> join us`, threadTs: parent.ts });
  expect(
    await (threads.known('T0FAKE', 'C0LONG', parent.ts) ?? threads.ask(client, 'T0FAKE', 'C0LONG', parent.ts, bot())),
  ).toBe(true);
  const calls = fake.calls.filter((c) => c.method === 'conversations.replies');
  // 22 messages, 15 a call: the mention is on the second page.
  expect(calls).toHaveLength(2);
  expect(calls.every((c) => Number(c.args.limit) === 15)).toBe(true);
  expect(paid).toEqual(['slack:T0FAKE:history', 'slack:T0FAKE:history']);
});
