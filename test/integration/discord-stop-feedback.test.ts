import { takeEveryForm } from '../fakes/chaos-refusals.js';
import { expect, it } from 'vitest';
import { stopCustomId } from '../../src/connectors/discord/controls.js';
import { MESSAGES } from '../../src/core/user-messages.js';
import { replyText, splitText } from '../../src/emulator/replies.js';
import { createMetrics } from '../../src/server/metrics.js';
import type { ShownMessage } from '../fakes/discord/index.js';
import { ANN, BOB, type Stack, type StackOptions, stackPerTest } from './discord/stack.js';

// Stop and feedback end to end on Discord: real discord.js against the fake Discord, the relay on
// SQLite, the real upstream client against the emulator.

const stacks = stackPerTest();

type Row = { components?: { custom_id?: string }[] };
const customIds = (m: ShownMessage | undefined): string[] =>
  ((m?.components ?? []) as Row[]).flatMap((r) => (r.components ?? []).map((c) => c.custom_id ?? ''));
const stopId = (m: ShownMessage | undefined) => customIds(m).find((id) => id.startsWith('bridge:stop:'));
const voteIds = (m: ShownMessage | undefined) => customIds(m).filter((id) => id.startsWith('bridge:vote:'));

async function start(opts: StackOptions = {}) {
  const metrics = createMetrics({ defaultMetrics: false, platforms: ['discord'] });
  // About the buttons themselves: a chaos run may lose answers here, not refuse the buttons.
  const s = await stacks({ chunkDelayMs: 5, ...opts, fake: { refuse: takeEveryForm, ...opts.fake }, metrics });
  return { stack: s, metrics };
}

/** Ann mentions the bot in the channel (thread mode); resolves once the reply shows a Stop button. */
async function askAndWaitForStop(stack: Stack, text: string) {
  const { fake } = stack;
  const { threadId } = stack.ask(text);
  const reply = () => fake.botMessages(threadId).find((m) => !m.ephemeral);
  await fake.waitUntil(() => stopId(reply()), 10_000, 'a Stop button');
  return { threadId, reply, customId: stopId(reply()) as string };
}

/** The interaction's answer once it has one: its callback type, ephemeral flag and content. */
async function answerOf(stack: Stack, id: string) {
  await expect.poll(() => stack.fake.state.interactions.get(id)?.callbackType, { timeout: 5000 }).toBeDefined();
  const i = stack.fake.state.interactions.get(id);
  return { type: i?.callbackType, ephemeral: i?.ephemeral, content: i?.callbackContent };
}

it('Stop ends the upstream request, keeps the text so far with a note, and removes the button', async () => {
  const { stack, metrics } = await start();
  const q = 'tell me a story [chunks 10] [stall 3]';
  const soFar = splitText(replyText(q), 10).slice(0, 3).join('');
  const { threadId, reply, customId } = await askAndWaitForStop(stack, q);
  await stack.fake.waitUntil(() => reply()?.content === soFar, 5000, 'the text so far');
  expect(stack.emu.openStreams).toBe(1);

  const click = stack.fake.dispatchButton({ channelId: threadId, userId: ANN, customId, messageId: reply()?.id });
  expect(await answerOf(stack, click.id)).toMatchObject({ type: 6 }); // acknowledged, nothing said
  await expect.poll(() => stack.emu.openStreams).toBe(0);
  await stack.fake.waitUntil(() => reply()?.content === soFar + MESSAGES.stopped, 5000, 'the stopped reply');
  await expect.poll(() => customIds(reply())).toEqual([]);
  expect(stack.fake.botMessages(threadId)).toHaveLength(1);
  await expect.poll(() => metrics.text()).toMatch(/bridge_replies_stopped_total\{platform="discord"\} 1/);
});

it("another user's Stop is refused ephemerally and the reply goes on; a Stop after the end does nothing", async () => {
  const { stack } = await start();
  const q = 'a slower answer please [chunks 20] [delay 40]';
  const { threadId, reply, customId } = await askAndWaitForStop(stack, q);

  const bobs = stack.fake.dispatchButton({ channelId: threadId, userId: BOB, customId, messageId: reply()?.id });
  expect(await answerOf(stack, bobs.id)).toEqual({ type: 4, ephemeral: true, content: MESSAGES.stopNotOwner });
  await stack.fake.waitUntil(() => reply()?.content === replyText(q), 10_000, 'the whole reply');
  await expect.poll(() => customIds(reply())).toEqual([]);

  const edits = reply()?.edits;
  const late = stack.fake.dispatchButton({ channelId: threadId, userId: ANN, customId, messageId: reply()?.id });
  expect(await answerOf(stack, late.id)).toMatchObject({ type: 6 });
  expect(reply()?.content).toBe(replyText(q));
  expect(reply()?.edits).toBe(edits);
});

it('"stop" written by the asker in the thread stops the reply', async () => {
  const { stack } = await start();
  const q = 'tell me more [chunks 10] [stall 4]';
  const soFar = splitText(replyText(q), 10).slice(0, 4).join('');
  const { threadId, reply } = await askAndWaitForStop(stack, q);
  await stack.fake.waitUntil(() => reply()?.content === soFar, 5000, 'the text so far');
  stack.fake.dispatchMessage({ channelId: threadId, authorId: ANN, content: 'STOP' });
  await stack.fake.waitUntil(() => reply()?.content === soFar + MESSAGES.stopped, 5000, 'the stopped reply');
  await expect.poll(() => stack.emu.openStreams).toBe(0);
  expect(stack.emu.requests.filter((r) => r.endpoint === 'stream').map((r) => r.message)).toEqual([q]);
});

it('feedback: a thumbs up is stored and thanked, a second vote replaces it, the next message carries it', async () => {
  const { stack, metrics } = await start({ relaySettings: { feedback: true } });
  const { fake } = stack;
  const { threadId } = stack.ask('how are you');
  const reply = () => fake.botMessages(threadId).find((m) => !m.ephemeral);
  await fake.waitUntil(() => voteIds(reply()).length === 2, 10_000, 'the feedback buttons');
  expect(reply()?.content).toBe(replyText('how are you'));
  expect(stopId(reply())).toBeUndefined();
  const [up, down] = voteIds(reply());

  const first = fake.dispatchButton({ channelId: threadId, userId: ANN, customId: up ?? '', messageId: reply()?.id });
  expect(await answerOf(stack, first.id)).toEqual({ type: 4, ephemeral: true, content: MESSAGES.feedbackThanks });
  const votes = () => stack.store.db.prepare('SELECT user_id, vote, delivered_at FROM feedback_votes').all();
  expect(votes()).toEqual([{ user_id: ANN, vote: 'up', delivered_at: null }]);
  const second = fake.dispatchButton({
    channelId: threadId,
    userId: ANN,
    customId: down ?? '',
    messageId: reply()?.id,
  });
  expect(await answerOf(stack, second.id)).toMatchObject({ content: MESSAGES.feedbackThanks });
  expect(votes()).toEqual([{ user_id: ANN, vote: 'down', delivered_at: null }]);
  expect(await metrics.text()).toMatch(/bridge_feedback_total\{platform="discord",vote="down"\} 1/);
  // Nothing but the reply is posted in the thread for everyone.
  expect(fake.botMessages(threadId).filter((m) => !m.ephemeral)).toHaveLength(1);

  fake.dispatchMessage({ channelId: threadId, authorId: ANN, content: 'and now?' });
  await fake.waitUntil(() => fake.botMessages(threadId).some((m) => m.content === 'You said: and now?'));
  const stream = stack.emu.requests.filter((r) => r.endpoint === 'stream');
  const meta = stream[1]?.metadata as { feedback?: unknown } | undefined;
  expect(meta?.feedback).toEqual([{ messageId: expect.any(String), vote: 'down', at: expect.any(String) }]);
  expect(votes()).toEqual([{ user_id: ANN, vote: 'down', delivered_at: expect.any(Number) }]);
});

it('FEEDBACK off: a finished reply shows no buttons; a Stop for an unknown reply is acknowledged silently', async () => {
  const { stack } = await start({ relaySettings: { feedback: false } });
  const { fake } = stack;
  const { threadId } = stack.ask('hello there');
  await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === replyText('hello there')));
  await expect.poll(() => customIds(fake.botMessages(threadId)[0])).toEqual([]);
  const click = fake.dispatchButton({ channelId: threadId, userId: ANN, customId: stopCustomId('gone') });
  expect(await answerOf(stack, click.id)).toMatchObject({ type: 6 });
});
