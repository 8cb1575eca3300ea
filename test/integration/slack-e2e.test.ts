import { afterEach, expect, it } from 'vitest';
import { fencesBalanced } from '../../src/core/reply/fences.js';
import { longMarkdown } from '../../src/emulator/replies.js';
import { visibleLength } from '../fakes/slack/web-api.js';
import { mrkdwnOracle, reopenedParts, slackPartsProblems } from './slack-parts.js';
import { type SlackStack, startSlackStack } from './slack-stack.js';

// End to end over Socket Mode and HTTP mode: what users see in the fake Slack, what the
// upstream (emulator) received.

let s: SlackStack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

it('a mention gets a streamed reply in its thread; a follow-up without mention continues the conversation', async () => {
  s = await startSlackStack({ chunkDelayMs: 10 });
  const { fake } = s;
  const question = 'please explain how streaming replies work in this bridge, in some detail';
  const post = fake.userPost({ channel: 'C1', text: `<@U0BOT> ${question}`, user: 'U0ANN' });
  fake.setUserName('U0ANN', 'ann');
  await fake.sendEvent(post.message);
  await fake.sendEvent(post.mention ?? {});
  await s.settled(2);
  const [reply, ...more] = fake.botMessages('C1', post.ts);
  expect(more).toHaveLength(0);
  expect(reply?.text).toBe(`You said: ${question}`);
  expect(reply?.versions.length).toBeGreaterThanOrEqual(3);
  expect(s.results.map((r) => r.status).sort()).toEqual(['answered', 'duplicate']);

  const follow = fake.userPost({ channel: 'C1', text: 'and then?', threadTs: post.ts, user: 'U0ANN' });
  await fake.sendEvent(follow.message);
  await s.settled(3);
  expect(fake.botMessages('C1', post.ts).map((m) => m.text)).toEqual([`You said: ${question}`, 'You said: and then?']);
  const [first, second] = s.chatRequests();
  expect(first?.message).toBe(question);
  expect(second?.conversationId).toBe(first?.conversationId);
  expect(first?.metadata).toMatchObject({
    source: 'slack',
    workspaceId: 'T0FAKE',
    channelId: 'C1',
    userId: 'U0ANN',
    userName: 'ann',
    messageId: post.ts,
  });
  // Where each message was written: the mention in the channel, the follow-up in the thread.
  expect(first?.metadata).not.toHaveProperty('threadId');
  expect(second?.metadata).toMatchObject({ source: 'slack', channelId: 'C1', threadId: post.ts });
});

it('answers DMs in one rolling conversation, and `reset` starts a fresh one', async () => {
  s = await startSlackStack();
  const { fake } = s;
  const asked: string[] = [];
  for (const [i, text] of ['hello', 'again', 'reset', 'fresh'].entries()) {
    const post = fake.userPost({ channel: 'D1', text });
    asked.push(post.ts);
    await fake.sendEvent(post.message);
    await s.settled(i + 1);
  }
  // Each is answered in a thread under it (DMs are threads in Slack's agent experience).
  const texts = asked.map((ts) => fake.botMessages('D1', ts)[0]?.text);
  expect(texts[0]).toBe('You said: hello');
  expect(texts[3]).toBe('You said: fresh');
  expect(fake.botMessages('D1')).toEqual([]);
  const [a, b, c] = s.chatRequests();
  expect(b?.conversationId).toBe(a?.conversationId);
  expect(c?.message).toBe('fresh');
  expect(c?.conversationId).not.toBe(a?.conversationId);
});

it('HTTP mode: signed events are answered; bad and stale signatures get 401 and no upstream call', async () => {
  s = await startSlackStack({ mode: 'http' });
  const { fake } = s;
  const forged = fake.userPost({ channel: 'C2', text: '<@U0BOT> forged' });
  for (const o of [{ badSignature: true }, { stale: true }, { noSignature: true }]) {
    expect((await fake.postSignedEvent(s.eventsUrl, fake.envelope(forged.mention ?? {}), o)).status).toBe(401);
  }
  const post = fake.userPost({ channel: 'C2', text: '<@U0BOT> over http' });
  expect((await fake.postSignedEvent(s.eventsUrl, fake.envelope(post.mention ?? {}))).status).toBe(200);
  await s.settled(1);
  expect(s.chatRequests().map((r) => r.message)).toEqual(['over http']);
  expect(fake.botMessages('C2', post.ts)[0]?.text).toBe('You said: over http');
  expect(fake.botMessages('C2', forged.ts)).toHaveLength(0);
});

it('the same event retried twice causes one upstream call', async () => {
  s = await startSlackStack();
  const { fake } = s;
  const post = fake.userPost({ channel: 'C3', text: '<@U0BOT> only once' });
  await fake.sendEvent(post.mention ?? {});
  await fake.sendEvent(post.mention ?? {}, { retryNum: 1 });
  await fake.sendEvent(post.mention ?? {}, { retryNum: 2 });
  await s.settled(3);
  expect(s.chatRequests()).toHaveLength(1);
  expect(fake.botMessages('C3', post.ts)).toHaveLength(1);
});

/** The bot's parts of a `[long n]` reply in C4, each checked for Slack's limits and fences. */
async function longReply(stack: SlackStack, n: number): Promise<string[]> {
  const post = stack.fake.userPost({ channel: 'C4', text: `<@U0BOT> give me [long ${n}]` });
  await stack.fake.sendEvent(post.mention ?? {});
  await stack.settled(1);
  expect(stack.results[0]?.status).toBe('answered');
  const parts = stack.fake.botMessages('C4', post.ts).map((m) => m.text);
  for (const p of parts) {
    // What a user sees: an entity is one character, zero-width spaces none.
    expect(visibleLength(p.replace(/\u200B/g, ''))).toBeLessThanOrEqual(3900);
    expect(fencesBalanced(p)).toBe(true);
  }
  return parts;
}

it('a 9,000-char reply with code arrives exact in parts of at most 3,900 chars, fences balanced', async () => {
  s = await startSlackStack({ chunkDelayMs: 0 });
  const parts = await longReply(s, 9000);
  expect(parts.length).toBeGreaterThanOrEqual(3);
  const expected = longMarkdown(9000);
  expect(expected).toContain('```ts');
  // Exact: the parts spell the reply as rendered by an oracle, up to the fence lines added at a
  // cut inside a code block and the whitespace at cuts.
  expect(slackPartsProblems(parts, mrkdwnOracle(expected))).toEqual([]);
});

it('a 24,000-char reply (code blocks cut, reopened and cut again) arrives exact over seven or more parts', async () => {
  s = await startSlackStack({ chunkDelayMs: 0 });
  const parts = await longReply(s, 24_000);
  expect(parts.length).toBeGreaterThanOrEqual(7);
  const whole = mrkdwnOracle(longMarkdown(24_000));
  expect(slackPartsProblems(parts, whole)).toEqual([]);
  // The path this is about was taken: a part that reopened a code block is followed by another.
  expect(reopenedParts(parts, whole).some((i) => i < parts.length - 1)).toBe(true);
}, 30_000);
