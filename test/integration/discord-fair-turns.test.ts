import { expect, it } from 'vitest';
import { MESSAGES } from '../../src/core/user-messages.js';
import { ChannelKind } from '../fakes/discord/state.js';
import { type Stack, stackPerTest } from './discord/stack.js';

// Fair turns and refusals on Discord (issue 19), through the real discord.js connector, relay,
// upstream client and emulator against the fake Discord, in thread mode: each mention opens a
// thread of its own (its own place), so one user's 60 mentions are 60 places competing for the
// upstream slots. Counted in the fakes, not timed.

const FLOOD = 60;
const FLOODER = '200000000000000001';
const OTHER = '200000000000000002';

const start = stackPerTest();

/** The threads opened from messages of the channel. */
const threadsOf = (stack: Stack) =>
  [...stack.fake.state.channels.values()].filter(
    (c) => c.type === ChannelKind.PublicThread && c.parentId === stack.channelId,
  );

it('the upstream slots go in turn by user: another user’s mention is answered after at most a couple of the flood’s', async () => {
  const s = await start({ relaySettings: { userMessagesPerMinute: 1000, maxConcurrentReplies: 2 } });
  const { fake, emu } = s;
  for (let i = 0; i < FLOOD; i++) {
    s.ask(`flood ${i} [chunks 5] [delay 60]`, { authorId: FLOODER });
  }
  // Two replies hold the slots, the rest of the flood waits for them.
  const relay = s.relay;
  await fake.waitUntil(() => relay.stats().queued >= FLOOD - 2, 20_000, 'the flood queued');
  const startedBefore = emu.requests.length;
  s.ask('my turn', { authorId: OTHER });
  await fake.waitUntil(() => emu.requests.some((r) => r.message === 'my turn'), 20_000, 'the other call');
  const at = emu.requests.findIndex((r) => r.message === 'my turn');
  // Upstream calls of the flood that started after the other user's message was in line.
  expect(at - startedBefore).toBeLessThanOrEqual(3);
  await relay.drain(30_000);
  expect(emu.requests.filter((r) => r.message?.startsWith('flood'))).toHaveLength(FLOOD);
}, 60_000);

it('refusals of a flood open no thread and are told in public at most once a minute', async () => {
  const s = await start({ relaySettings: { userMessagesPerMinute: 20 } });
  const { fake, channelId, emu } = s;
  const flood = Array.from({ length: FLOOD }, (_, i) => s.ask(`flood ${i}`, { authorId: FLOODER }).message);
  const other = s.ask('hello', { authorId: OTHER });
  await fake.waitUntil(
    () => fake.botMessages(other.threadId).find((m) => m.content === 'You said: hello'),
    20_000,
    'the other user’s reply',
  );
  // Every message handed to the relay is settled (answered or refused).
  await s.relay.drain(30_000);
  expect(emu.requests).toHaveLength(21);
  // One thread per answered mention, none for a refusal.
  const threads = threadsOf(s);
  expect(threads).toHaveLength(21);
  // One public notice for the flooder, in the channel, as a reply to one of its messages.
  const notices = fake.botMessages(channelId).filter((m) => m.content === MESSAGES.slowDown);
  expect(notices).toHaveLength(1);
  const floodIds = new Set(flood.map((m) => String(m.id)));
  const ref = notices[0]?.messageReference as { message_id?: string } | undefined;
  expect(floodIds.has(ref?.message_id ?? '')).toBe(true);
  // Nothing else of the bridge's in the channel itself: answers live in their threads.
  expect(fake.botMessages(channelId)).toHaveLength(1);
}, 60_000);

it('a refused /ask is told ephemerally, and its public "thinking" response is removed', async () => {
  const s = await start({ relaySettings: { userMessagesPerMinute: 1 } });
  const { fake, channelId } = s;
  const ask = (text: string) =>
    fake.dispatchInteraction({
      channelId,
      userId: FLOODER,
      name: 'ask',
      options: [{ name: 'text', type: 3, value: text }],
    });
  const first = ask('one');
  await fake.waitUntil(() =>
    fake.botMessages(channelId).find((m) => m.interactionId === first.id && m.content === 'You said: one'),
  );
  const second = ask('two');
  const told = await fake.waitUntil(() =>
    fake.botMessages(channelId).find((m) => m.interactionId === second.id && m.content === MESSAGES.slowDown),
  );
  expect(told.ephemeral).toBe(true);
  await s.relay.drain(10_000);
  // Only the private word is left of the refused /ask.
  expect(fake.botMessages(channelId).filter((m) => m.interactionId === second.id)).toEqual([told]);
}, 30_000);
