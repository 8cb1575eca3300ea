import { afterEach, expect, it } from 'vitest';
import { createMetrics, type PromBridgeMetrics } from '../../src/server/metrics.js';
import { type SlackStack, startSlackStack } from './slack-stack.js';

// Context is best effort, end to end through Bolt and the fake Slack: a history read that the
// learned budget cannot pay now is not made and not waited for, one that takes too long is given
// up; mid-thread mentions are answered without context, and /metrics counts each skip.

let s: SlackStack | undefined;
let release: (() => void) | undefined;
afterEach(async () => {
  release?.();
  release = undefined;
  await s?.close();
  s = undefined;
});

const CONTEXT = { mode: 'message' as const, maxMessages: 30, maxChars: 6000 };

function seedThreads(stack: SlackStack, n: number): string[] {
  stack.fake.setUserName('U0ANN', 'Ann');
  return Array.from({ length: n }, (_, i) => {
    const parent = stack.fake.seedMessage('C1', { user: 'U0ANN', text: `topic ${i}` });
    stack.fake.seedMessage('C1', { user: 'U0ANN', text: `details of topic ${i}`, threadTs: parent });
    return parent;
  });
}

async function mention(stack: SlackStack, parent: string, text: string): Promise<void> {
  const post = stack.fake.userPost({ channel: 'C1', text: `<@U0BOT> ${text}`, threadTs: parent, user: 'U0ANN' });
  await stack.fake.sendEvent(post.mention ?? post.message);
}

const count = (text: string, reason: string) =>
  Number(text.match(new RegExp(`bridge_context_skipped_total\\{platform="slack",reason="${reason}"\\} (\\d+)`))?.[1]);

it('history limited to one read a minute and spent: later mid-thread mentions skip context at once', async () => {
  const metrics: PromBridgeMetrics = createMetrics({ defaultMetrics: false, platforms: ['slack'] });
  s = await startSlackStack({
    relaySettings: { context: CONTEXT },
    metrics,
    // Slack's limit for commercially distributed apps outside the Marketplace.
    fake: { limits: { 'conversations.replies': { limit: 1, windowMs: 60_000, per: 'team' } } },
  });
  const threads = seedThreads(s, 5);
  for (const [i, parent] of threads.entries()) {
    await mention(s, parent, `question ${i}`);
    await s.settled(i + 1);
  }
  expect(s.results.map((r) => r.status)).toEqual(Array(5).fill('answered'));
  for (const [i, parent] of threads.entries()) {
    if (i === 0) continue; // the emulator echoes the transcript there
    expect(s.fake.botMessages('C1', parent).map((m) => m.text)).toEqual([`You said: question ${i}`]);
  }
  const sent = s.chatRequests();
  // The first read was paid and carried its thread; the second met the limit (429, learned).
  expect(sent[0]?.message).toContain('details of topic 0');
  expect(sent.slice(1).map((r) => r.message)).toEqual(['question 1', 'question 2', 'question 3', 'question 4']);
  // Once learned, no read is even tried: the budget cannot pay it now.
  expect(s.fake.calls.filter((c) => c.method === 'conversations.replies')).toHaveLength(2);
  const text = await metrics.text();
  expect([count(text, 'error'), count(text, 'budget'), count(text, 'timeout')]).toEqual([1, 3, 0]);
});

it('a history read that does not answer in time: the reply goes on while the read is still held', async () => {
  const metrics: PromBridgeMetrics = createMetrics({ defaultMetrics: false, platforms: ['slack'] });
  // An injected timeout instead of the real 2 s.
  s = await startSlackStack({ relaySettings: { context: { ...CONTEXT, timeoutMs: 100 } }, metrics });
  const [parent] = seedThreads(s, 1) as [string];
  s.fake.switches.holdMethods.set(
    'conversations.replies',
    new Promise<void>((r) => {
      release = r;
    }),
  );
  await mention(s, parent, 'anyone there?');
  const [result] = await s.settled(1);
  expect(result?.status).toBe('answered');
  // Answered while Slack still holds the history call (released only after the test).
  expect(s.chatRequests().map((r) => r.message)).toEqual(['anyone there?']);
  expect(s.fake.botMessages('C1', parent).map((m) => m.text)).toEqual(['You said: anyone there?']);
  expect(count(await metrics.text(), 'timeout')).toBe(1);
});
