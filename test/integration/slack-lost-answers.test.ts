import { afterEach, describe, expect, it } from 'vitest';
import { longMarkdown } from '../../src/emulator/replies.js';
import type { LostAnswer } from '../fakes/chaos.js';
import { loseNth } from '../fakes/lost-answers.js';
import { mrkdwnOracle, slackPartsProblems } from './slack-parts.js';
import { type SlackStack, startSlackStack } from './slack-stack.js';
import type { FakeMessage } from '../fakes/slack/index.js';

// A Slack write that took effect and whose answer was lost (the connection cut, or a 5xx after
// the write): through the real Bolt client, for every write kind, the user sees ONE exact, final
// reply and no second message. The fake applies the write, then drops the answer.

let s: SlackStack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** The finished native reply's thumbs up/down (given with chat.stopStream). */
const feedbackShown = (m: FakeMessage | undefined): boolean =>
  JSON.stringify(m?.blocks ?? []).includes('"feedback_buttons"');

const Q = 'tell me plainly about lost answers and writes that may have happened';
const EXPECTED = `You said: ${Q}`;

/** A mention in channel C1 answered in its thread (edit mode), the lost write picked by `plan`. */
async function editModeReply(plan: Record<string, number[]>, how: LostAnswer) {
  const faults = loseNth(plan, how);
  s = await startSlackStack({ streaming: 'edit', chunkDelayMs: 10, fake: { chaos: faults } });
  const post = s.fake.userPost({ channel: 'C1', text: `<@U0BOT> ${Q}` });
  await s.fake.sendEvent(post.mention ?? {});
  await s.settled(1);
  return { faults, replies: s.fake.botMessages('C1', post.ts) };
}

/** A message in a DM thread (native streams), the lost write picked by `plan`. */
async function nativeReply(plan: Record<string, number[]>, how: LostAnswer) {
  const faults = loseNth(plan, how);
  s = await startSlackStack({
    streaming: 'native',
    chunkDelayMs: 10,
    fake: { chaos: faults },
    relaySettings: { feedback: true },
  });
  const root = s.fake.userPost({ channel: 'D1', text: 'thread root' });
  await s.fake.sendEvent(s.fake.userPost({ channel: 'D1', text: Q, threadTs: root.ts }).message);
  await s.settled(1);
  return { faults, replies: s.fake.botMessages('D1', root.ts) };
}

describe.each<LostAnswer>(['cut', '5xx'])('answer lost (%s) after the write took effect', (how) => {
  it('chat.postMessage: the first post is found by its metadata and continued, not posted again', async () => {
    const { faults, replies } = await editModeReply({ 'chat.postMessage': [1] }, how);
    expect(faults.lost).toEqual(['chat.postMessage#1']);
    expect(s?.results[0]?.status).toBe('answered');
    expect(replies.map((m) => m.text)).toEqual([EXPECTED]);
    const reads = s?.fake.calls.filter((c) => c.method === 'conversations.replies') ?? [];
    expect(reads.length).toBeGreaterThanOrEqual(1);
    // No more than a non-Marketplace app gets per call.
    expect(reads.map((c) => Number(c.args.limit))).toEqual(reads.map(() => 15));
    expect(s?.fake.calls.filter((c) => c.method === 'chat.postMessage' && c.result === 'ok')).toHaveLength(1);
  });

  it('chat.update: repeated as it is (an update is idempotent)', async () => {
    const { replies } = await editModeReply({ 'chat.update': [1] }, how);
    expect(replies.map((m) => m.text)).toEqual([EXPECTED]);
  });

  it('chat.startStream: the stream that started is found and finished; no second stream', async () => {
    const { faults, replies } = await nativeReply({ 'chat.startStream': [1] }, how);
    expect(faults.lost).toEqual(['chat.startStream#1']);
    expect(replies).toHaveLength(1);
    expect(replies[0]?.text).toBe(EXPECTED);
    expect(replies[0]?.streaming).toBe(false);
    // Finished by its stream's stop, which carries the feedback buttons.
    expect(feedbackShown(replies[0])).toBe(true);
  });

  it('chat.appendStream: the chunk that may show is not appended twice', async () => {
    const { faults, replies } = await nativeReply({ 'chat.appendStream': [1] }, how);
    expect(faults.lost).toEqual(['chat.appendStream#1']);
    expect(replies).toHaveLength(1);
    expect(replies[0]?.text).toBe(EXPECTED);
    expect(replies[0]?.streaming).toBe(false);
    // Finished by its stream's stop, which carries the feedback buttons.
    expect(feedbackShown(replies[0])).toBe(true);
  });

  it('chat.stopStream: the stopped stream is left final and exact', async () => {
    const { faults, replies } = await nativeReply({ 'chat.stopStream': [1] }, how);
    expect(faults.lost).toEqual(['chat.stopStream#1']);
    expect(replies).toHaveLength(1);
    expect(replies[0]?.text).toBe(EXPECTED);
    expect(replies[0]?.streaming).toBe(false);
    // Finished by its stream's stop, which carries the feedback buttons.
    expect(feedbackShown(replies[0])).toBe(true);
  });
});

it('a top-level DM reply whose post was lost is found in the thread it opened under the message', async () => {
  // Every DM is answered in a thread under it (Slack's agent experience), in edit mode too.
  const faults = loseNth({ 'chat.postMessage': [1] });
  s = await startSlackStack({ streaming: 'edit', chunkDelayMs: 10, fake: { chaos: faults } });
  await s.fake.sendEvent(s.fake.userPost({ channel: 'D7', text: Q, channelType: 'im' }).message);
  await s.settled(1);
  expect(faults.lost).toEqual(['chat.postMessage#1']);
  expect(s.fake.agent.replies('D7').map((m) => m.text)).toEqual([EXPECTED]);
  expect(s.fake.calls.some((c) => c.method === 'conversations.replies' || c.method === 'conversations.history')).toBe(
    true,
  );
});

it('a continuation part whose post was lost is found after the part before it; parts exact', async () => {
  const faults = loseNth({ 'chat.postMessage': [2] });
  s = await startSlackStack({ streaming: 'edit', chunkDelayMs: 0, fake: { chaos: faults } });
  const post = s.fake.userPost({ channel: 'C2', text: '<@U0BOT> give me [long 6000]' });
  await s.fake.sendEvent(post.mention ?? {});
  await s.settled(1);
  expect(faults.lost).toEqual(['chat.postMessage#2']);
  const parts = s.fake.botMessages('C2', post.ts).map((m) => m.text);
  expect(parts.length).toBeGreaterThanOrEqual(2);
  expect(slackPartsProblems(parts, mrkdwnOracle(longMarkdown(6000)))).toEqual([]);
});

it('a lost stream start and then the lost append after it: still one stream, exact, with its buttons', async () => {
  const { faults, replies } = await nativeReply({ 'chat.startStream': [1], 'chat.appendStream': [1] }, 'cut');
  expect(faults.lost).toEqual(['chat.startStream#1', 'chat.appendStream#1']);
  expect(replies).toHaveLength(1);
  expect(replies[0]?.text).toBe(EXPECTED);
  expect(replies[0]?.streaming).toBe(false);
  expect(feedbackShown(replies[0])).toBe(true);
  expect(s?.fake.calls.filter((c) => c.method === 'chat.startStream')).toHaveLength(1);
});
