import { chaosFromEnv } from '../fakes/chaos.js';
import { expect, it } from 'vitest';
import { longMarkdown } from '../../src/emulator/replies.js';
import { mentionProblems } from '../fakes/discord/writes.js';
import { partsProblems, writeSequenceProblems } from './discord/parts.js';
import { ANN, BOB, stackPerTest } from './discord/stack.js';

// End to end: real discord.js against the fake Discord, the relay with SQLite, the upstream
// client against the emulator. Assertions are on what users see in the fake.

const start = stackPerTest();

it('a mention gets a thread with a streamed reply; a follow-up without mention continues the conversation', async () => {
  const s = await start({ chunkDelayMs: 15 });
  const { fake, channelId } = s;
  const question = 'please explain how streaming replies work in this bridge, in some detail';
  const { threadId } = s.ask(question);
  const reply = await fake.waitUntil(() =>
    fake.botMessages(threadId).find((m) => m.content === `You said: ${question}`),
  );
  expect(reply.edits).toBeGreaterThanOrEqual(2);
  expect(fake.botMessages(threadId)).toHaveLength(1);
  expect(fake.state.channels.get(threadId)?.parentId).toBe(channelId);

  fake.dispatchMessage({ channelId: threadId, authorId: ANN, content: 'and then?' });
  await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: and then?'));
  const [first, second] = s.chatRequests();
  expect(first?.conversationId).toBeDefined();
  expect(second?.conversationId).toBe(first?.conversationId);
  expect(first?.message).toBe(question);
  // Where each message was written, as on Slack: the mention in the channel (the thread it
  // opens is the place, not where it was written), the follow-up in the thread.
  expect(first?.metadata).toMatchObject({ source: 'discord', workspaceId: s.guildId, channelId, userId: ANN });
  expect(first?.metadata).not.toHaveProperty('threadId');
  expect(second?.metadata).toMatchObject({ source: 'discord', workspaceId: s.guildId, channelId, threadId });
});

it('a long reply with code becomes several messages of at most 2000 chars, fences balanced, text complete', async () => {
  const s = await start({ chunkDelayMs: 0 });
  const { fake } = s;
  const { threadId } = s.ask('give me [long 5200]');
  const expected = longMarkdown(5200);
  const parts = await fake.waitUntil(
    () => {
      const msgs = fake.botMessages(threadId).map((m) => m.content);
      return msgs.length >= 3 && partsProblems(msgs, expected).length === 0 ? msgs : undefined;
    },
    20_000,
    'the complete long reply',
  );
  expect(parts.every((p) => p.length <= 2000)).toBe(true);
  expect(expected).toContain('```ts');
});

it('answers a DM in the DM channel, one conversation per DM', async () => {
  const s = await start();
  const { fake } = s;
  const dm = s.dm({ authorId: BOB, content: 'hello' });
  await fake.waitUntil(() => fake.botMessages(dm).find((m) => m.content === 'You said: hello'));
  fake.dispatchMessage({ channelId: dm, authorId: BOB, content: 'again' });
  await fake.waitUntil(() => fake.botMessages(dm).find((m) => m.content === 'You said: again'));
  const [a, b] = s.chatRequests();
  expect(b?.conversationId).toBe(a?.conversationId);
});

it('/reset starts a fresh conversation for the thread; /ask answers through the interaction', async () => {
  const s = await start();
  const { fake } = s;
  const { threadId } = s.ask('one');
  await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: one'));
  const reset = fake.dispatchInteraction({ channelId: threadId, userId: ANN, name: 'reset' });
  await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.interactionId === reset.id && m.ephemeral));
  fake.dispatchMessage({ channelId: threadId, authorId: ANN, content: 'two' });
  await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: two'));
  const [r1, r2] = s.chatRequests();
  expect(r2?.conversationId).toBeDefined();
  expect(r2?.conversationId).not.toBe(r1?.conversationId);

  const ask = fake.dispatchInteraction({
    channelId: threadId,
    userId: ANN,
    name: 'ask',
    options: [{ name: 'text', type: 3, value: 'three @everyone <@123456789012345678> <@&987654321098765432>' }],
  });
  const answer = await fake.waitUntil(() =>
    fake
      .botMessages(threadId)
      .find(
        (m) =>
          m.interactionId === ask.id &&
          m.content === 'You said: three @everyone <@123456789012345678> <@&987654321098765432>',
      ),
  );
  expect(answer.ephemeral).toBe(false);
  // /ask in the thread is the thread's conversation
  expect(s.chatRequests()[2]?.conversationId).toBe(r2?.conversationId);
});

it('upstream text cannot ping: allowed_mentions.parse is empty on every create and edit', async () => {
  const s = await start({ chunkDelayMs: 10 });
  const { fake } = s;
  const text = 'repeat after me @everyone @here <@123456789012345678> <@&987654321098765432> please, at length';
  const { threadId } = s.ask(text);
  await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === `You said: ${text}`));
  const writes = fake.record.filter(
    (r) => /\/messages(\/\d+)?$/.test(r.path) && (r.method === 'POST' || r.method === 'PATCH'),
  );
  expect(writes.length).toBeGreaterThanOrEqual(2);
  for (const w of writes) expect(w.allowed_mentions).toEqual({ parse: [] });
  // And every other write with text (the shared check the stack also runs at close).
  expect(mentionProblems(fake.record)).toEqual([]);
});

it('twelve concurrent long replies in two channels finish exact with zero 429s', async () => {
  // A tight budget so that the scheduler has to hold writes back in every thread.
  const budget = { limit: 3, windowMs: 1000 };
  const s = await start({ fake: { rateLimit: budget }, assumedBudget: budget, replyMode: 'thread', chunkDelayMs: 1 });
  const { fake, guildId, channelId } = s;
  const other = fake.addChannel(guildId, 'other');
  const threads: { id: string; n: number }[] = [];
  for (let i = 0; i < 12; i++) {
    const n = 2600 + i * 150;
    const { threadId } = s.ask(`reply [long ${n}]`, {
      channelId: i % 2 === 0 ? channelId : other,
      authorId: `20000000000000001${i % 4}`,
    });
    threads.push({ id: threadId, n });
  }
  await fake.waitUntil(
    () =>
      threads.every(
        (t) =>
          partsProblems(
            fake.botMessages(t.id).map((m) => m.content),
            longMarkdown(t.n),
          ).length === 0,
      ),
    // Many budget windows of real time, stretched on a busy machine: the wait is for the final
    // texts, generously bounded.
    90_000,
    'twelve complete replies',
  );
  // Zero 429s. Under a chaos run each lost 5xx answer may cost one retry discord.js makes by
  // itself, outside the bridge's budget (a known gap, see docs/lost-writes.md): at most that many.
  expect(fake.rateLimitHits).toBeLessThanOrEqual(chaosFromEnv()?.injected.lost ?? 0);
  for (const t of threads) expect(fake.botMessages(t.id).length).toBeGreaterThanOrEqual(2);
  // The run needed many windows of budget (the limiter was exercised), and no write in any thread
  // was wasted: each changed what its message shows, only added to it, and never went back to a
  // part once the next was posted. How many edits a message got is not asserted: it follows how
  // long the stream ran (edits are paced by the interval and the budget), so a slow machine gets
  // more of them, and no user is hurt by that.
  const writes = threads.map((t) =>
    fake.record.filter((r) => r.channelId === t.id && /\/messages(\/\d+)?$/.test(r.path)),
  );
  expect(writes.reduce((a, w) => a + w.length, 0)).toBeGreaterThan(4 * budget.limit);
  threads.forEach((t, i) => expect(writeSequenceProblems(writes[i] ?? []), `thread of [long ${t.n}]`).toEqual([]));
}, 120_000);

it('the same MESSAGE_CREATE twice gives one reply, also after a restart; a restart keeps the thread conversation', async () => {
  const s = await start();
  const { fake } = s;
  const { message: user, threadId } = s.ask('remember me');
  await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: remember me'));
  fake.redispatch('MESSAGE_CREATE', user);

  await s.restart();
  // A replay after the restart reaches a client with an empty cache: the relay's dedup must hold.
  fake.redispatch('MESSAGE_CREATE', user);
  fake.dispatchMessage({ channelId: threadId, authorId: ANN, content: 'after restart' });
  await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: after restart'));
  expect(fake.botMessages(threadId).map((m) => m.content)).toEqual([
    'You said: remember me',
    'You said: after restart',
  ]);
  const reqs = s.chatRequests();
  expect(reqs).toHaveLength(2);
  expect(reqs[1]?.conversationId).toBe(reqs[0]?.conversationId);
});

it('inline mode: replies in the channel referencing the message, one conversation per channel', async () => {
  const s = await start({ replyMode: 'inline' });
  const { fake, channelId } = s;
  const m1 = s.ask('first').message;
  await fake.waitUntil(() => fake.botMessages(channelId).find((m) => m.content === 'You said: first'));
  s.ask('second', { authorId: BOB });
  await fake.waitUntil(() => fake.botMessages(channelId).find((m) => m.content === 'You said: second'));
  expect(fake.botMessages(channelId)[0]?.messageReference).toMatchObject({ message_id: m1.id });
  expect(fake.state.channels.get(String(m1.id))).toBeUndefined();
  const [a, b] = s.chatRequests();
  expect(b?.conversationId).toBe(a?.conversationId);
});

it('a reply left streaming by a crash is marked interrupted when the bridge starts again', async () => {
  const s = await start();
  const { fake, channelId } = s;
  const { threadId } = s.ask('hi');
  const reply = await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: hi'));
  // What a crash mid-stream leaves in the database: a reply still "streaming" with its text so far.
  const id = await s.store.inflight.begin({
    platform: 'discord',
    eventId: 'crashed-1',
    target: { place: { platform: 'discord', workspaceId: s.guildId, channelId, threadId } },
    at: Date.now(),
    owner: '',
  });
  // Upstream text that would ping if the repair edit let it (the stack's close checks every write).
  const atCrash = 'You said: h @everyone <@123456789012345678> <@&987654321098765432>';
  await s.store.inflight.progress(id, [reply.id], atCrash, Date.now());
  await s.restart();
  expect(await s.relay.recoverInterrupted([s.connector])).toEqual({ repaired: 1, unrepairable: 0, failed: 0 });
  expect(fake.botMessages(threadId)[0]?.content).toBe(`${atCrash}\n\n_(reply interrupted)_`);
  expect(await s.store.inflight.listOpen()).toEqual([]);
});
