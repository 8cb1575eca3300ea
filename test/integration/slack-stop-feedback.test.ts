import { takeEveryForm } from '../fakes/chaos-refusals.js';
import { afterEach, expect, it } from 'vitest';
import { FEEDBACK_ACTION, STOP_ACTION } from '../../src/connectors/slack/controls.js';
import { MESSAGES } from '../../src/core/user-messages.js';
import { replyText, splitText } from '../../src/emulator/replies.js';
import { createMetrics } from '../../src/server/metrics.js';
import type { FakeMessage } from '../fakes/slack/index.js';
import { mrkdwnOracle } from './slack-parts.js';
import { type SlackStack, type SlackStackOptions, startSlackStack } from './slack-stack.js';

// Stop and feedback end to end on Slack (edit mode): real Bolt against the fake Slack, the relay
// on SQLite, the real upstream client against the emulator.

let s: SlackStack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

type Block = { type: string; elements?: Record<string, unknown>[] };
const blocksOf = (m: FakeMessage | undefined) => (m?.blocks ?? []) as Block[];
/** The reply key in the message's Stop button, if it shows one. */
const stopValue = (m: FakeMessage | undefined): string | undefined =>
  blocksOf(m)
    .flatMap((b) => (b.type === 'actions' ? (b.elements ?? []) : []))
    .find((e) => e.action_id === STOP_ACTION)?.value as string | undefined;
const feedbackValues = (m: FakeMessage | undefined): { up: string; down: string } | undefined => {
  const el = blocksOf(m)
    .flatMap((b) => (b.type === 'context_actions' ? (b.elements ?? []) : []))
    .find((e) => e.type === 'feedback_buttons') as
    { positive_button: { value: string }; negative_button: { value: string } } | undefined;
  return el === undefined ? undefined : { up: el.positive_button.value, down: el.negative_button.value };
};
const hasControls = (m: FakeMessage | undefined) =>
  blocksOf(m).some((b) => b.type === 'actions' || b.type === 'context_actions');

async function start(opts: SlackStackOptions = {}) {
  const metrics = createMetrics({ defaultMetrics: false, platforms: ['slack'] });
  // About the buttons themselves: a chaos run may lose answers here, not refuse the buttons.
  s = await startSlackStack({ chunkDelayMs: 5, ...opts, fake: { refuse: takeEveryForm, ...opts.fake }, metrics });
  return { stack: s, metrics };
}

/** A mention in C1; returns the thread the reply goes to and the reply message, once it shows a Stop. */
async function askAndWaitForStop(stack: SlackStack, text: string, user = 'U0USER') {
  const post = stack.fake.userPost({ channel: 'C1', text: `<@U0BOT> ${text}`, user });
  await stack.fake.sendEvent(post.mention ?? {});
  const reply = () => stack.fake.botMessages('C1', post.ts)[0];
  await expect.poll(() => stopValue(reply()), { timeout: 5000 }).toBeDefined();
  return { threadTs: post.ts, reply, key: stopValue(reply()) as string };
}

it('Stop ends the upstream request, keeps the text so far with a note, and removes the button', async () => {
  const { stack, metrics } = await start();
  const q = 'tell me a story [chunks 10] [stall 3]';
  const soFar = splitText(replyText(q), 10).slice(0, 3).join('');
  const { threadTs, reply, key } = await askAndWaitForStop(stack, q);
  await expect.poll(() => reply()?.text).toBe(soFar.trimEnd());
  expect(stack.emu.openStreams).toBe(1);

  await stack.fake.sendClick({
    actionId: STOP_ACTION,
    value: key,
    channel: 'C1',
    messageTs: reply()?.ts ?? '',
    threadTs,
  });
  const [result] = await stack.settled(1);
  expect(result?.status).toBe('answered');
  await expect.poll(() => stack.emu.openStreams).toBe(0);
  expect(reply()?.text).toBe(mrkdwnOracle(soFar.trimEnd() + MESSAGES.stopped));
  expect(stopValue(reply())).toBeUndefined();
  expect(hasControls(reply())).toBe(false);
  expect(stack.fake.ephemerals).toEqual([]);
  expect(await metrics.text()).toMatch(/bridge_replies_stopped_total\{platform="slack"\} 1/);
});

it("another user's Stop is refused with an ephemeral note; a Stop after the end does nothing", async () => {
  const { stack, metrics } = await start();
  const q = 'a slower answer please [chunks 20] [delay 40]';
  const { threadTs, reply, key } = await askAndWaitForStop(stack, q);
  const click = (user: string) =>
    stack.fake.sendClick({
      actionId: STOP_ACTION,
      value: key,
      user,
      channel: 'C1',
      messageTs: reply()?.ts ?? '',
      threadTs,
    });

  await click('U0OTHER');
  await expect
    .poll(() => stack.fake.ephemerals)
    .toEqual([{ channel: 'C1', user: 'U0OTHER', text: MESSAGES.stopNotOwner, threadTs }]);
  await stack.settled(1);
  expect(reply()?.text).toBe(replyText(q));
  expect(hasControls(reply())).toBe(false);

  const writes = stack.fake.writeLog.length;
  await click('U0USER');
  // The ack came back; nothing is written or said for a reply that already ended.
  expect(stack.fake.writeLog.length).toBe(writes);
  expect(stack.fake.ephemerals).toHaveLength(1);
  expect(reply()?.text).toBe(replyText(q));
  expect(await metrics.text()).toMatch(/bridge_replies_stopped_total\{platform="slack"\} 0/);
});

it('"stop" written by the asker in the thread stops the reply; from someone else it is a message', async () => {
  const { stack } = await start();
  const q = 'tell me more [chunks 10] [stall 4]';
  const soFar = splitText(replyText(q), 10).slice(0, 4).join('');
  const { threadTs, reply } = await askAndWaitForStop(stack, q);
  await expect.poll(() => reply()?.text).toBe(soFar.trimEnd());

  // Someone else's "stop" waits its turn in the place like any message (answered after the reply).
  await stack.fake.sendEvent(stack.fake.userPost({ channel: 'C1', text: 'stop', user: 'U0OTHER', threadTs }).message);
  await stack.fake.sendEvent(stack.fake.userPost({ channel: 'C1', text: 'Stop', threadTs }).message);
  const results = await stack.settled(3);
  expect(results.map((r) => r.status).sort()).toEqual(['answered', 'answered', 'stopped']);
  await expect.poll(() => stack.emu.openStreams).toBe(0);
  expect(reply()?.text).toBe(mrkdwnOracle(soFar.trimEnd() + MESSAGES.stopped));
  expect(stack.chatRequests().map((r) => r.message)).toEqual([q, 'stop']);
});

it('feedback: thumbs up is stored and thanked, a second vote replaces it, the next message carries it', async () => {
  const { stack, metrics } = await start({ mode: 'http', relaySettings: { feedback: true } });
  const post = stack.fake.userPost({ channel: 'C1', text: '<@U0BOT> how are you' });
  const ev = await stack.fake.postSignedEvent(stack.eventsUrl, stack.fake.envelope(post.mention ?? {}));
  expect(ev.status).toBe(200);
  await stack.settled(1);
  const reply = stack.fake.botMessages('C1', post.ts)[0];
  expect(reply?.text).toBe('You said: how are you');
  expect(stopValue(reply)).toBeUndefined();
  const values = feedbackValues(reply);
  expect(values).toBeDefined();
  const click = (value: string) =>
    stack.fake.postClick(stack.eventsUrl, {
      actionId: FEEDBACK_ACTION,
      elementType: 'feedback_buttons',
      value,
      channel: 'C1',
      messageTs: reply?.ts ?? '',
      threadTs: post.ts,
    });

  expect((await click(values?.up ?? '')).status).toBe(200);
  await expect.poll(() => stack.fake.ephemerals.length).toBe(1);
  expect(stack.fake.ephemerals[0]).toEqual({
    channel: 'C1',
    user: 'U0USER',
    text: MESSAGES.feedbackThanks,
    threadTs: post.ts,
  });
  const votes = () => stack.store.db.prepare('SELECT user_id, vote, delivered_at FROM feedback_votes').all();
  expect(votes()).toEqual([{ user_id: 'U0USER', vote: 'up', delivered_at: null }]);

  expect((await click(values?.down ?? '')).status).toBe(200);
  await expect.poll(() => stack.fake.ephemerals.length).toBe(2);
  expect(votes()).toEqual([{ user_id: 'U0USER', vote: 'down', delivered_at: null }]);
  expect(await metrics.text()).toMatch(/bridge_feedback_total\{platform="slack",vote="up"\} 1/);
  expect(await metrics.text()).toMatch(/bridge_feedback_total\{platform="slack",vote="down"\} 1/);
  // Nothing was posted in the channel for the votes.
  expect(stack.fake.botMessages('C1', post.ts)).toHaveLength(1);

  const next = stack.fake.userPost({ channel: 'C1', text: 'and now?', threadTs: post.ts });
  await stack.fake.postSignedEvent(stack.eventsUrl, stack.fake.envelope(next.message));
  await stack.settled(2);
  const again = stack.fake.userPost({ channel: 'C1', text: 'once more', threadTs: post.ts });
  await stack.fake.postSignedEvent(stack.eventsUrl, stack.fake.envelope(again.message));
  await stack.settled(3);
  const [, second, third] = stack.chatRequests().map((r) => r.metadata as { feedback?: unknown } | undefined);
  expect(second?.feedback).toEqual([{ messageId: expect.any(String), vote: 'down', at: expect.any(String) }]);
  expect(third?.feedback).toBeUndefined();
  expect(votes()).toEqual([{ user_id: 'U0USER', vote: 'down', delivered_at: expect.any(Number) }]);
});

it('FEEDBACK off: a finished reply shows no buttons', async () => {
  const { stack } = await start({ relaySettings: { feedback: false } });
  const post = stack.fake.userPost({ channel: 'C1', text: '<@U0BOT> hello there' });
  await stack.fake.sendEvent(post.mention ?? {});
  await stack.settled(1);
  const reply = stack.fake.botMessages('C1', post.ts)[0];
  expect(reply?.text).toBe('You said: hello there');
  expect(hasControls(reply)).toBe(false);
  expect(feedbackValues(reply)).toBeUndefined();
});

it('native streams: no Stop button while streaming, feedback buttons appended by chat.stopStream', async () => {
  const { stack } = await start({ streaming: 'auto', relaySettings: { feedback: true } });
  const root = stack.fake.userPost({ channel: 'D1', text: 'thread root' });
  await stack.fake.sendEvent(stack.fake.userPost({ channel: 'D1', text: 'hi native', threadTs: root.ts }).message);
  await stack.settled(1);
  const [reply] = stack.fake.botMessages('D1', root.ts);
  expect(reply?.streaming).toBe(false);
  expect(feedbackValues(reply)).toBeDefined();
  const starts = stack.fake.calls.filter((c) => c.method === 'chat.startStream' || c.method === 'chat.appendStream');
  expect(starts.length).toBeGreaterThan(0);
  expect(starts.every((c) => c.args.blocks === undefined)).toBe(true);
});
