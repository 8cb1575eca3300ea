import { expect, it } from 'vitest';

import type { WriteRecord } from '../fakes/discord/index.js';
import { mentionProblems, textWrites } from '../fakes/discord/writes.js';
import { ANN, stackPerTest } from './discord/stack.js';

// Upstream text can never ping anyone, on every path a bot write takes: /ask's original response
// and its follow-ups (interaction webhooks), and the edits crash recovery makes. Each test puts
// @everyone, a user and a role mention in the upstream text, shows that the write carrying it was
// made (so the check below saw it), and checks every write of the test. The same check runs after
// every test of the Discord e2e suites (the stack's close), whatever the test is about.

const start = stackPerTest();

const PINGS = '@everyone @here <@123456789012345678> <@!123456789012345679> <@&987654321098765432>';

/** Webhook paths carry the interaction token; match them by shape. */
const isOriginalEdit = (w: WriteRecord) =>
  w.method === 'PATCH' && /^\/webhooks\/\d+\/[^/]+\/messages\/@original$/.test(w.path);
const isFollowUp = (w: WriteRecord) => w.method === 'POST' && /^\/webhooks\/\d+\/[^/]+$/.test(w.path);
const isWebhookEdit = (w: WriteRecord) =>
  w.method === 'PATCH' && /^\/webhooks\/\d+\/[^/]+\/messages\/\d+$/.test(w.path);

it('/ask: a long answer full of mentions pings nobody, in the original response and in every follow-up', async () => {
  const s = await start({ chunkDelayMs: 0 });
  const { fake, channelId } = s;
  // Just under the emulator's 4,000-character limit for a message: the echo takes the original
  // response and a follow-up.
  const words: string[] = [];
  for (let i = 0; words.join(' ').length < 3800; i++) words.push(`${PINGS} line${i}`);
  const text = words.join(' ');
  const ask = fake.dispatchInteraction({
    channelId,
    userId: ANN,
    name: 'ask',
    options: [{ name: 'text', type: 3, value: text }],
  });
  const expected = `You said: ${text}`;
  const parts = await fake.waitUntil(
    () => {
      const msgs = fake.botMessages(channelId).filter((m) => m.interactionId === ask.id);
      return msgs.map((m) => m.content).join('') === expected ? msgs : undefined;
    },
    20_000,
    'the whole /ask answer',
  );
  expect(parts.length).toBeGreaterThanOrEqual(2);
  expect(parts.every((m) => m.ephemeral === false && m.content.length <= 2000)).toBe(true);

  // Each part shows mentions, and the paths this test is about were taken: the original response
  // (then edited by its id) and a follow-up.
  expect(parts.every((m) => m.content.includes('<@&987654321098765432>'))).toBe(true);
  const writes = textWrites(fake.record);
  expect(writes.some(isOriginalEdit)).toBe(true);
  expect(writes.some((w) => isWebhookEdit(w) && w.content?.includes('@everyone'))).toBe(true);
  expect(writes.some(isFollowUp)).toBe(true);
  expect(mentionProblems(fake.record)).toEqual([]);
});

it('crash recovery: the "reply interrupted" edit of a thread reply pings nobody', async () => {
  const s = await start();
  const { fake, channelId } = s;
  const { threadId } = s.ask('hi');
  const reply = await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: hi'));
  // What a crash mid-stream leaves in the database: a reply still "streaming" with its text so far.
  const atCrash = `You said: ${PINGS} and`;
  const id = await s.store.inflight.begin({
    platform: 'discord',
    eventId: 'crashed-mentions',
    target: { place: { platform: 'discord', workspaceId: s.guildId, channelId, threadId } },
    at: Date.now(),
    owner: '',
  });
  await s.store.inflight.progress(id, [reply.id], atCrash, Date.now());
  await s.restart();
  const before = fake.record.length;
  expect(await s.relay.recoverInterrupted([s.connector])).toEqual({ repaired: 1, unrepairable: 0, failed: 0 });
  expect(fake.botMessages(threadId)[0]?.content).toBe(`${atCrash}\n\n_(reply interrupted)_`);
  const repair = fake.record.slice(before).filter((w) => w.method === 'PATCH' && w.messageId === reply.id);
  expect(repair).toHaveLength(1);
  expect(mentionProblems(fake.record)).toEqual([]);
});

it('crash recovery: the "reply interrupted" edit of an /ask answer (interaction webhook) pings nobody', async () => {
  const s = await start();
  const { fake, channelId } = s;
  const ask = fake.dispatchInteraction({
    channelId,
    userId: ANN,
    name: 'ask',
    options: [{ name: 'text', type: 3, value: 'q' }],
  });
  const answer = await fake.waitUntil(() =>
    fake.botMessages(channelId).find((m) => m.interactionId === ask.id && m.content === 'You said: q'),
  );
  const atCrash = `You said: ${PINGS} so`;
  const id = await s.store.inflight.begin({
    platform: 'discord',
    eventId: 'crashed-ask',
    target: {
      place: { platform: 'discord', workspaceId: s.guildId, channelId },
      data: { kind: 'interaction', applicationId: fake.applicationId, interactionId: ask.id, token: ask.token },
    },
    at: Date.now(),
    owner: '',
  });
  await s.store.inflight.progress(id, [answer.id], atCrash, Date.now());
  await s.restart();
  const before = fake.record.length;
  expect(await s.relay.recoverInterrupted([s.connector])).toEqual({ repaired: 1, unrepairable: 0, failed: 0 });
  expect(fake.state.messages.get(answer.id)?.content).toBe(`${atCrash}\n\n_(reply interrupted)_`);
  expect(fake.record.slice(before).filter(isWebhookEdit)).toHaveLength(1);
  expect(mentionProblems(fake.record)).toEqual([]);
});
