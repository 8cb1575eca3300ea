import { afterEach, describe, expect, it } from 'vitest';
import { NOT_ALLOWED } from '../../src/connectors/discord/commands.js';
import {
  type HandleResult,
  type MessageHandler,
  PlatformRateLimitedError,
  PlatformWriteError,
} from '../../src/core/ports.js';
import { CapturingHandler, EchoHandler, type Harness, mention, startHarness } from './discord/harness.js';

// The connector with real discord.js against the fake Discord, before the relay: a stand-in
// handler echoes through the sink, so these tests pin down routing, sinks and the wire.

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('discord connector (thread mode)', () => {
  it('answers a mention in a new thread opened from the message, with mentions disabled on every write', async () => {
    const handler = new EchoHandler();
    h = await startHarness(handler);
    const { fake, channelId } = h;
    expect(h.connector.isReady()).toBe(true);
    const user = fake.dispatchMessage({
      channelId,
      authorId: '100000000000000001',
      content: mention(fake, 'How do I parse JSON in Go?'),
      mentionsBot: true,
    });
    const threadId = String(user.id);
    const reply = await fake.waitUntil(
      () => fake.botMessages(threadId).find((m) => m.content === 'You said: How do I parse JSON in Go?'),
      10_000,
      'the reply',
    );
    expect(reply.edits).toBe(1);
    const thread = fake.state.channels.get(threadId);
    expect(thread?.parentId).toBe(channelId);
    expect(thread?.name).toBe('How do I parse JSON in Go?');
    expect(fake.botMessages(channelId)).toEqual([]);
    const msg = handler.seen[0];
    expect(msg?.place).toEqual({ platform: 'discord', workspaceId: h.guildId, channelId, threadId });
    // Written in the channel; the thread it opens is the place.
    expect(msg?.origin).toEqual({ platform: 'discord', workspaceId: h.guildId, channelId });
    expect(msg?.mentionsBot).toBe(true);
    const writes = fake.record.filter((r) => r.path.includes('/messages') && !r.path.endsWith('/threads'));
    expect(writes.length).toBe(2);
    for (const w of writes) expect(w.allowed_mentions).toEqual({ parse: [] });
    expect(fake.record.some((r) => r.path === `/channels/${threadId}/typing`)).toBe(true);
    // headers of the writes reached the scheduler under the thread's bucket
    expect(h.observer.observed.some((o) => o.bucket === `discord:channel:${threadId}` && o.limit === 5)).toBe(true);
  });

  it('continues in its thread without a mention, ignores other threads unless mentioned, and ignores bots', async () => {
    const handler = new EchoHandler();
    h = await startHarness(handler);
    const { fake, channelId } = h;
    const first = fake.dispatchMessage({
      channelId,
      authorId: '100000000000000001',
      content: mention(fake, 'hello'),
      mentionsBot: true,
    });
    const threadId = String(first.id);
    await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: hello'));
    fake.dispatchMessage({ channelId: threadId, authorId: '100000000000000001', content: 'and more' });
    await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: and more'));
    expect(handler.seen[1]?.place).toEqual(handler.seen[0]?.place);
    expect(handler.seen[1]?.mentionsBot).toBe(false);

    const other = fake.addThread(channelId, '100000000000000002', 'user thread');
    fake.dispatchMessage({ channelId: other, authorId: '100000000000000002', content: 'not for the bot' });
    fake.dispatchMessage({
      channelId,
      authorId: '100000000000000003',
      content: mention(fake, 'from a bot'),
      mentionsBot: true,
      authorIsBot: true,
    });
    fake.dispatchMessage({
      channelId: other,
      authorId: '100000000000000002',
      content: mention(fake, 'now for you'),
      mentionsBot: true,
    });
    await fake.waitUntil(() => fake.botMessages(other).find((m) => m.content === 'You said: now for you'));
    expect(handler.seen.map((m) => m.text)).toEqual(['hello', 'and more', 'now for you']);
    expect(handler.seen[2]?.place).toEqual({ platform: 'discord', workspaceId: h.guildId, channelId, threadId: other });
  });

  it('answers a DM in the DM channel', async () => {
    const handler = new EchoHandler();
    h = await startHarness(handler);
    const { fake } = h;
    const dm = fake.addDm('100000000000000009');
    fake.dispatchMessage({ channelId: dm, authorId: '100000000000000009', content: 'hi there' });
    await fake.waitUntil(() => fake.botMessages(dm).find((m) => m.content === 'You said: hi there'));
    expect(handler.seen[0]?.isDm).toBe(true);
    expect(handler.seen[0]?.place).toEqual({ platform: 'discord', channelId: dm });
  });

  it('runs /ask through the interaction webhook and /reset with an ephemeral confirmation', async () => {
    const handler = new EchoHandler();
    h = await startHarness(handler);
    const { fake, channelId, guildId } = h;
    expect(
      fake.state.commands
        .get(guildId)
        ?.map((c) => c.name)
        .sort(),
    ).toEqual(['ask', 'reset']);
    const ask = fake.dispatchInteraction({
      channelId,
      userId: '100000000000000001',
      name: 'ask',
      options: [{ name: 'text', type: 3, value: 'what is up' }],
    });
    const shown = await fake.waitUntil(() =>
      fake.botMessages(channelId).find((m) => m.content === 'You said: what is up'),
    );
    expect(shown.interactionId).toBe(ask.id);
    expect(handler.seen[0]?.eventId).toBe(`interaction:${ask.id}`);
    expect(handler.seen[0]?.place).toEqual({ platform: 'discord', workspaceId: guildId, channelId });
    expect(fake.state.interactions.get(ask.id)?.callbackType).toBe(5);

    const reset = fake.dispatchInteraction({ channelId, userId: '100000000000000001', name: 'reset' });
    await fake.waitUntil(() => fake.state.interactions.get(reset.id)?.callbackType === 4);
    expect(handler.resets).toEqual([{ platform: 'discord', workspaceId: guildId, channelId }]);
    const confirmation = fake.botMessages(channelId).find((m) => m.interactionId === reset.id);
    expect(confirmation?.ephemeral).toBe(true);
  });
});

describe('discord /ask refused by the handler', () => {
  it('says so when not allowed, and removes the "thinking" response otherwise', async () => {
    const statuses: HandleResult['status'][] = ['not_allowed', 'duplicate'];
    const handler: MessageHandler = {
      handle: async () => ({ status: statuses.shift() ?? 'ignored' }),
      reset: async () => {},
    };
    h = await startHarness(handler);
    const { fake, channelId } = h;
    const a = fake.dispatchInteraction({
      channelId,
      userId: '100000000000000001',
      name: 'ask',
      options: [{ name: 'text', type: 3, value: 'q' }],
    });
    const shown = await fake.waitUntil(() =>
      fake.botMessages(channelId).find((m) => m.interactionId === a.id && m.content !== ''),
    );
    expect(shown.content).toBe(NOT_ALLOWED);
    const b = fake.dispatchInteraction({
      channelId,
      userId: '100000000000000001',
      name: 'ask',
      options: [{ name: 'text', type: 3, value: 'q' }],
    });
    await fake.waitUntil(() =>
      fake.record.find((r) => r.method === 'DELETE' && r.path.includes(`/webhooks/`) && r.status === 204),
    );
    expect(fake.botMessages(channelId).filter((m) => m.interactionId === b.id)).toEqual([]);
  });
});

describe('discord connector (inline mode)', () => {
  it('replies in the channel, referencing the user message', async () => {
    const handler = new EchoHandler();
    h = await startHarness(handler, { replyMode: 'inline' });
    const { fake, channelId } = h;
    const user = fake.dispatchMessage({
      channelId,
      authorId: '100000000000000001',
      content: mention(fake, 'inline please'),
      mentionsBot: true,
    });
    const reply = await fake.waitUntil(() =>
      fake.botMessages(channelId).find((m) => m.content === 'You said: inline please'),
    );
    expect(reply.messageReference).toMatchObject({ message_id: user.id, channel_id: channelId });
    expect(handler.seen[0]?.place).toEqual({ platform: 'discord', workspaceId: h.guildId, channelId });
    expect(fake.state.channels.get(String(user.id))).toBeUndefined();
  });
});

describe('discord reply sink', () => {
  it('surfaces rate limits to the caller instead of queueing, without causing 429s', async () => {
    const handler = new CapturingHandler();
    h = await startHarness(handler, { fake: { rateLimit: { limit: 3, windowMs: 2000 } } });
    const { fake, channelId } = h;
    fake.dispatchMessage({ channelId, authorId: '100000000000000001', content: mention(fake, 'x'), mentionsBot: true });
    const msg = await handler.next();
    const sink = msg.sink;
    const { messageId } = await sink.post('a', { final: false, part: 0 });
    await sink.edit(messageId, 'ab', { final: false, part: 0 });
    await sink.edit(messageId, 'abc', { final: false, part: 0 });
    const err = await sink.edit(messageId, 'abcd', { final: false, part: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformRateLimitedError);
    expect((err as PlatformRateLimitedError).bucket).toBe(`discord:channel:${msg.place.threadId}`);
    expect((err as PlatformRateLimitedError).retryAfterMs).toBeGreaterThan(0);
    expect(fake.rateLimitHits).toBe(0);
    expect(h.observer.observed.at(-1)).toMatchObject({ remaining: 0, limit: 3 });

    const gone = await sink.edit('123456789012345678', 'zzz', { final: true, part: 0 }).catch((e: unknown) => e);
    // Either still limited locally or a permanent error, never a silent success.
    expect(gone instanceof PlatformWriteError || gone instanceof PlatformRateLimitedError).toBe(true);
  });

  it('turns a 429 it could not foresee into PlatformRateLimitedError with the retry time', async () => {
    const handler = new CapturingHandler();
    h = await startHarness(handler, { fake: { rateLimit: { limit: 2, windowMs: 3000 } } });
    const { fake, channelId } = h;
    fake.dispatchMessage({ channelId, authorId: '100000000000000001', content: mention(fake, 'y'), mentionsBot: true });
    const msg = await handler.next();
    const threadId = msg.place.threadId ?? '';
    await msg.sink.showWorking(); // opens the thread
    // Someone else (another process with the same token) uses up the thread's bucket.
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${fake.apiUrl}/v10/channels/${threadId}/messages`, {
        method: 'POST',
        headers: { authorization: `Bot ${fake.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ content: `other ${i}`, allowed_mentions: { parse: [] } }),
      });
      expect(res.status).toBe(200);
    }
    const err = await msg.sink.post('hello', { final: false, part: 0 }).catch((e: unknown) => e);
    await msg.sink.clearWorking();
    expect(err).toBeInstanceOf(PlatformRateLimitedError);
    expect((err as PlatformRateLimitedError).retryAfterMs).toBeGreaterThan(0);
    expect(fake.rateLimitHits).toBe(1);
    expect(h.observer.observed.at(-1)).toMatchObject({ bucket: `discord:channel:${threadId}`, remaining: 0 });
  });

  it('markInterrupted edits the message of a stored target', async () => {
    const handler = new EchoHandler();
    h = await startHarness(handler);
    const { fake, channelId } = h;
    const user = fake.dispatchMessage({
      channelId,
      authorId: '100000000000000001',
      content: mention(fake, 'long story'),
      mentionsBot: true,
    });
    const threadId = String(user.id);
    const reply = await fake.waitUntil(() =>
      fake.botMessages(threadId).find((m) => m.content === 'You said: long story'),
    );
    const target = handler.seen[0]?.sink.target;
    if (!target) throw new Error('no target');
    await h.connector.markInterrupted(JSON.parse(JSON.stringify(target)), reply.id, 'You said: long… (interrupted)');
    expect(fake.botMessages(threadId)[0]?.content).toBe('You said: long… (interrupted)');
    await expect(h.connector.markInterrupted(target, '123456789012345678', 'x')).rejects.toBeInstanceOf(
      PlatformWriteError,
    );
  });

  it('postInterrupted tells the place of a reply a crash cut before its first write (in the channel when no thread was opened)', async () => {
    const handler = new CapturingHandler();
    h = await startHarness(handler);
    const { fake, channelId } = h;
    fake.dispatchMessage({
      channelId,
      authorId: '100000000000000001',
      content: mention(fake, 'then the crash'),
      mentionsBot: true,
    });
    const msg = await handler.next();
    const target = JSON.parse(JSON.stringify(msg.sink.target));
    await h.connector.postInterrupted?.(target, 'The reply was interrupted before any text arrived. Please try again.');
    const shown = fake.botMessages(channelId).at(-1);
    expect(shown?.content).toBe('The reply was interrupted before any text arrived. Please try again.');
    expect(shown?.allowedMentions).toEqual({ parse: [] });
  });
});
