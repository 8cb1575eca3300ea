import { afterEach, expect, it } from 'vitest';
import { UNKNOWN_COMMAND } from '../../src/connectors/discord/commands.js';
import { EchoHandler, type Harness, mention, startHarness } from './discord/harness.js';
import { ANN, type Stack, startStack } from './discord/stack.js';

// What reaches the relay, and what never needs to: every interaction gets an answer (never
// Discord's "This interaction failed"), and a message with nothing visible is dropped at intake.

let h: Harness | undefined;
let s: Stack | undefined;
afterEach(async () => {
  await h?.close();
  await s?.close();
  h = undefined;
  s = undefined;
});

it('answers an unknown slash command and an unknown button with an ephemeral "unknown command"', async () => {
  const handler = new EchoHandler();
  h = await startHarness(handler);
  const { fake, channelId } = h;

  const cmd = fake.dispatchInteraction({ channelId, userId: ANN, name: 'no-such-command' });
  const cmdAnswer = await fake.waitUntil(() => fake.botMessages(channelId).find((m) => m.interactionId === cmd.id));
  expect(cmdAnswer).toMatchObject({ content: UNKNOWN_COMMAND, ephemeral: true });
  expect(fake.state.interactions.get(cmd.id)?.callbackType).toBe(4);

  const button = fake.dispatchButton({ channelId, userId: ANN, customId: 'something-else:42' });
  const buttonAnswer = await fake.waitUntil(() =>
    fake.botMessages(channelId).find((m) => m.interactionId === button.id),
  );
  expect(buttonAnswer).toMatchObject({ content: UNKNOWN_COMMAND, ephemeral: true });
  expect(fake.state.interactions.get(button.id)?.callbackType).toBe(4);
  expect(handler.seen).toEqual([]);
});

const INVISIBLE = ['\u200b', ' \u200c\u200d ', '\u2060\ufeff', '   '];

it('a DM of zero-width characters or whitespace only gets no upstream call and no answer', async () => {
  s = await startStack();
  const { fake, emu } = s;
  const dm = fake.addDm(ANN);
  for (const content of INVISIBLE) fake.dispatchMessage({ channelId: dm, authorId: ANN, content });
  // One place answers in arrival order: once this reply shows, the ones before were decided.
  fake.dispatchMessage({ channelId: dm, authorId: ANN, content: 'visible' });
  await fake.waitUntil(() => fake.botMessages(dm).find((m) => m.content === 'You said: visible'));
  expect(emu.requests.map((r) => r.message)).toEqual(['visible']);
  expect(fake.botMessages(dm)).toHaveLength(1);
  expect(fake.record.filter((r) => r.channelId === dm && r.path.endsWith('/typing'))).toHaveLength(1);
});

it('a mention with nothing else visible in a channel gets no upstream call, no thread and no answer', async () => {
  s = await startStack({ replyMode: 'inline' });
  const { fake, emu, channelId } = s;
  const bare = [mention(fake, ''), ...INVISIBLE.map((t) => mention(fake, t))];
  for (const content of bare) fake.dispatchMessage({ channelId, authorId: ANN, content, mentionsBot: true });
  fake.dispatchMessage({ channelId, authorId: ANN, content: mention(fake, 'visible'), mentionsBot: true });
  await fake.waitUntil(() => fake.botMessages(channelId).find((m) => m.content === 'You said: visible'));
  expect(emu.requests.map((r) => r.message)).toEqual(['visible']);
  expect(fake.botMessages(channelId)).toHaveLength(1);
  expect(fake.record.filter((r) => r.path.endsWith('/typing'))).toHaveLength(1);
  expect(fake.record.filter((r) => r.path.endsWith('/threads'))).toEqual([]);
});
