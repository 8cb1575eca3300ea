import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ChatError, type ChatService } from '../core/chat-port.js';
import { type Emulator, type EmulatorStreamFormat, type StreamIds, startEmulator } from '../emulator/index.js';
import { collect, TEST_KEY, testClient } from '../../test/support/upstream.js';

// Every endpoint of both forms against the in-process emulator, with its documented errors.

let emu: Emulator;
let a: ChatService;
let b: ChatService;
let waitsA: number[];
let waitsB: number[];

beforeAll(async () => {
  emu = await startEmulator({
    apiKey: TEST_KEY,
    bots: ['demo-bot', 'other-bot'],
    chunkDelayMs: 0,
    maxMessageChars: 200,
  });
  ({ service: a, waits: waitsA } = testClient(emu.url, 'a'));
  ({ service: b, waits: waitsB } = testClient(emu.url, 'b'));
});
afterAll(async () => {
  await a.close();
  await b.close();
  await emu.close();
});
beforeEach(() => {
  emu.reset();
  emu.setOptions({ streamFormat: 'sse-json', streamIds: 'both' });
  waitsA.length = 0;
  waitsB.length = 0;
});

const BOT = 'demo-bot';
const errorOf = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a ChatError');
    },
    (e: unknown) => {
      if (!(e instanceof ChatError)) throw e;
      return e;
    },
  );

describe('Form A', () => {
  it('A1: a new conversation, then its continuation, with metadata', async () => {
    const first = await a.send({ botId: BOT, message: 'hello', metadata: { source: 'test', userId: 'U1' } });
    expect(first.text).toBe('You said: hello');
    expect(first.conversationId).toMatch(/\S/);
    expect(first.messageId).toMatch(/\S/);
    const second = await a.send({ botId: BOT, message: 'again', conversationId: first.conversationId! });
    expect(second).toMatchObject({ text: 'You said: again', conversationId: first.conversationId });
    expect(emu.requests.map((r) => [r.endpoint, r.conversationId])).toEqual([
      ['send', undefined],
      ['send', first.conversationId],
    ]);
    expect(emu.requests[0]!.metadata).toEqual({ source: 'test', userId: 'U1' });
    expect(a.mintConversationId()).toBeUndefined();
  });

  const formats: EmulatorStreamFormat[] = ['sse-json', 'sse-text', 'ndjson', 'json-preamble', 'plain'];
  const idModes: StreamIds[] = ['header', 'event', 'both', 'none'];
  for (const streamFormat of formats) {
    for (const streamIds of idModes) {
      it(`A2 ${streamFormat}, ids in ${streamIds}: the same text as A1, the conversation id where shown`, async () => {
        emu.setOptions({ streamFormat, streamIds });
        const message = 'stream me\nline two 🌍 [chunks 7]';
        const stream = await a.stream({ botId: BOT, message });
        const got = await collect(stream);
        expect(got.error).toBeUndefined();
        expect(got.text).toBe((await a.send({ botId: BOT, message })).text);
        const fromEvents = got.events.flatMap((e) => (e.type === 'ids' && e.conversationId ? [e.conversationId] : []));
        const id = stream.conversationId ?? fromEvents[0];
        const conv = emu.requests.find((r) => r.endpoint === 'stream');
        expect(conv).toBeDefined();
        if (
          streamIds === 'none' ||
          (streamIds === 'event' && (streamFormat === 'plain' || streamFormat === 'sse-text'))
        ) {
          // Nothing reveals it (plain/sse-text events carry no ids).
          if (streamIds === 'none') expect(id).toBeUndefined();
        } else {
          expect(id).toMatch(/\S/);
          expect(emu.conversation(id!)?.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
        }
      });
    }
  }

  it('A2 continues a conversation and a long Markdown reply arrives whole', async () => {
    const { conversationId } = await a.send({ botId: BOT, message: 'start' });
    const got = await collect(
      await a.stream({ botId: BOT, message: 'more [long 3000]', conversationId: conversationId! }),
    );
    expect(got.text).toHaveLength(3000);
    expect(emu.conversation(conversationId!)?.messages).toHaveLength(4);
  });

  it('A3: the history of a conversation', async () => {
    const { conversationId } = await a.send({ botId: BOT, message: 'one' });
    await a.send({ botId: BOT, message: 'two', conversationId: conversationId! });
    const page = await a.history(BOT, conversationId!);
    expect(page.conversationId).toBe(conversationId);
    expect(page.messageCount).toBe(4);
    expect(page.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(page.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'one'],
      ['assistant', 'You said: one'],
      ['user', 'two'],
      ['assistant', 'You said: two'],
    ]);
    expect(page.messages[0]!.id).toMatch(/\S/);
    expect(page.messages[0]!.timestamp).toMatch(/T/);
  });

  it('A4: pages, limit and since', async () => {
    for (let i = 0; i < 5; i++) await a.send({ botId: BOT, message: `conv ${i}` });
    const p1 = await a.listConversations(BOT, { page: 1, limit: 2 });
    expect(p1.conversations).toHaveLength(2);
    expect(p1.pagination).toEqual({ page: 1, limit: 2, total: 5, hasMore: true });
    const p3 = await a.listConversations(BOT, { page: 3, limit: 2 });
    expect(p3.conversations).toHaveLength(1);
    expect(p3.pagination?.hasMore).toBe(false);
    const all = await a.listConversations(BOT);
    expect(all.conversations).toHaveLength(5);
    expect(all.conversations[0]).toMatchObject({
      id: expect.any(String),
      messageCount: 2,
      preview: expect.any(String),
    });
    expect(all.conversations[0]!.updatedAt).toMatch(/T/);
    const none = await a.listConversations(BOT, { since: new Date(Date.now() + 60_000).toISOString() });
    expect(none.conversations).toEqual([]);
    expect(emu.requests.filter((r) => r.endpoint === 'list').at(-1)?.query.since).toBeDefined();
  });

  it('errors: unknown bot, unknown or expired conversation, too long, bad key, bad request', async () => {
    expect((await errorOf(a.send({ botId: 'nope', message: 'x' }))).kind).toBe('unknown_bot');
    expect((await errorOf(a.stream({ botId: 'nope', message: 'x', conversationId: 'c' }))).kind).toBe('unknown_bot');
    expect((await errorOf(a.listConversations('nope'))).kind).toBe('unknown_bot');
    expect((await errorOf(a.stream({ botId: BOT, message: 'x', conversationId: 'missing' }))).kind).toBe(
      'conversation_gone',
    );
    expect((await errorOf(a.history(BOT, 'missing'))).kind).toBe('conversation_gone');
    const { conversationId } = await a.send({ botId: BOT, message: 'x' });
    emu.expire(conversationId!);
    expect((await errorOf(a.send({ botId: BOT, message: 'y', conversationId: conversationId! }))).kind).toBe(
      'conversation_gone',
    );
    expect(await errorOf(a.send({ botId: BOT, message: 'x'.repeat(201) }))).toMatchObject({
      kind: 'too_long',
      details: { status: 400 },
    });
    expect((await errorOf(a.send({ botId: BOT, message: 'x [status 400]' }))).kind).toBe('bad_request');
    const wrongKey = testClient(emu.url, 'a', { apiKey: 'wrong' }).service;
    const err = await errorOf(wrongKey.stream({ botId: BOT, message: 'x' }));
    expect(err).toMatchObject({ kind: 'unauthorized', details: { status: 401 } });
    await wrongKey.close();
    expect(waitsA).toEqual([]);
  });

  it('429 and 500 are retried; no retry once text has streamed', async () => {
    emu.injectFault({ status: 429, retryAfterSeconds: 3, times: 2 });
    expect((await a.send({ botId: BOT, message: 'x' })).text).toBe('You said: x');
    expect(waitsA).toEqual([3000, 3000]);
    emu.injectFault({ status: 500, times: 3, endpoint: 'stream' });
    const err = await errorOf(a.stream({ botId: BOT, message: 'x' }));
    expect(err).toMatchObject({ kind: 'server', details: { status: 500 } });
    expect(emu.requests.filter((r) => r.endpoint === 'stream')).toHaveLength(3);
    emu.reset();
    const got = await collect(await a.stream({ botId: BOT, message: 'cut me [cut 2]' }));
    expect(got.error).toMatchObject({ kind: 'interrupted', details: { partial: true } });
    expect(got.text.length).toBeGreaterThan(0);
    expect(emu.requests).toHaveLength(1);
  });
});

describe('Form B', () => {
  it('B1: a session the client chose, continued', async () => {
    const session = b.mintConversationId();
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.mintConversationId()).not.toBe(session);
    const first = await b.send({
      botId: BOT,
      message: 'hello',
      conversationId: session!,
      metadata: { source: 'test' },
    });
    expect(first).toMatchObject({ text: 'You said: hello', conversationId: session, messageId: expect.any(String) });
    await b.send({ botId: BOT, message: 'again', conversationId: session! });
    expect(emu.conversation(session!)?.messages).toHaveLength(4);
    expect(emu.requests[0]!.body).toEqual({
      bot_id: BOT,
      message: 'hello',
      session_id: session,
      metadata: { source: 'test' },
    });
  });

  for (const streamFormat of ['sse-json', 'sse-text', 'ndjson', 'json-preamble', 'plain'] as const) {
    it(`B2 ${streamFormat}: the same text as B1`, async () => {
      emu.setOptions({ streamFormat });
      const session = b.mintConversationId()!;
      const message = 'über\n\nstreams 🚀 [chunks 9]';
      const got = await collect(await b.stream({ botId: BOT, message, conversationId: session }));
      expect(got.error).toBeUndefined();
      expect(got.text).toBe(`You said: ${message}`);
      expect(got.events.at(-1)).toEqual({ type: 'end' });
      if (streamFormat === 'sse-json' || streamFormat === 'ndjson' || streamFormat === 'json-preamble') {
        expect(got.events).toContainEqual(expect.objectContaining({ type: 'ids', conversationId: session }));
      }
      expect(emu.conversation(session)?.messages).toHaveLength(2);
    });
  }

  it('B3: history with limit, before and after', async () => {
    const session = b.mintConversationId()!;
    for (const m of ['one', 'two', 'three']) await b.send({ botId: BOT, message: m, conversationId: session });
    const all = await b.history(BOT, session);
    expect(all.messages).toHaveLength(6);
    expect(all.hasMore).toBe(false);
    expect(all.conversationId).toBe(session);
    const last2 = await b.history(BOT, session, { limit: 2 });
    expect(last2.messages.map((m) => m.content)).toEqual(['three', 'You said: three']);
    expect(last2.hasMore).toBe(true);
    const before = await b.history(BOT, session, { limit: 2, before: last2.messages[0]!.id });
    expect(before.messages.map((m) => m.content)).toEqual(['two', 'You said: two']);
    const after = await b.history(BOT, session, { limit: 1, after: all.messages[0]!.id });
    expect(after.messages.map((m) => m.content)).toEqual(['You said: one']);
    expect(emu.requests.at(-1)?.query).toMatchObject({ session_id: session, limit: '1', after: all.messages[0]!.id });
  });

  it('B4: the sessions of a bot, limited', async () => {
    for (let i = 0; i < 3; i++) await b.send({ botId: BOT, message: `s${i}`, conversationId: b.mintConversationId()! });
    await b.send({ botId: 'other-bot', message: 'elsewhere', conversationId: b.mintConversationId()! });
    const two = await b.listConversations(BOT, { limit: 2 });
    expect(two.conversations).toHaveLength(2);
    expect(two.pagination?.hasMore).toBe(true);
    expect(two.conversations[0]).toMatchObject({
      id: expect.any(String),
      messageCount: 2,
      createdAt: expect.any(String),
    });
    const all = await b.listConversations(BOT);
    expect(all.conversations).toHaveLength(3);
    expect(all.pagination).toMatchObject({ hasMore: false, total: 3 });
    expect(emu.requests.at(-1)?.query).toMatchObject({ bot_id: BOT });
  });

  it('errors: INVALID_BOT_ID, MESSAGE_TOO_LONG, UNAUTHORIZED, SESSION_EXPIRED, unknown session history', async () => {
    expect(await errorOf(b.send({ botId: 'nope', message: 'x' }))).toMatchObject({
      kind: 'unknown_bot',
      details: { status: 400, code: 'INVALID_BOT_ID', endpoint: 'B1 send' },
    });
    expect((await errorOf(b.listConversations('nope'))).kind).toBe('unknown_bot');
    expect(await errorOf(b.stream({ botId: BOT, message: 'x'.repeat(201) }))).toMatchObject({
      kind: 'too_long',
      details: { code: 'MESSAGE_TOO_LONG' },
    });
    const wrongKey = testClient(emu.url, 'b', { apiKey: 'wrong' }).service;
    expect(await errorOf(wrongKey.send({ botId: BOT, message: 'x' }))).toMatchObject({
      kind: 'unauthorized',
      details: { code: 'UNAUTHORIZED' },
    });
    await wrongKey.close();
    const session = b.mintConversationId()!;
    await b.send({ botId: BOT, message: 'x', conversationId: session });
    emu.expire(session);
    expect(await errorOf(b.stream({ botId: BOT, message: 'y', conversationId: session }))).toMatchObject({
      kind: 'conversation_gone',
      details: { status: 410, code: 'SESSION_EXPIRED' },
    });
    expect(await errorOf(b.history(BOT, 'never-seen'))).toMatchObject({
      kind: 'conversation_gone',
      details: { code: 'SESSION_NOT_FOUND' },
    });
    expect(waitsB).toEqual([]);
  });

  it('RATE_LIMITED beyond the budget, BOT_ERROR after 3 tries', async () => {
    emu.injectFault({ status: 429, retryAfterSeconds: 20, times: 5, form: 'b' });
    expect(await errorOf(b.send({ botId: BOT, message: 'x' }))).toMatchObject({
      kind: 'rate_limited',
      details: { code: 'RATE_LIMITED', retryAfterMs: 20_000 },
    });
    expect(waitsB).toEqual([20_000]);
    emu.reset();
    emu.injectFault({ status: 500, times: 3, form: 'b' });
    expect(await errorOf(b.stream({ botId: BOT, message: 'x' }))).toMatchObject({
      kind: 'server',
      details: { code: 'BOT_ERROR' },
    });
    expect(emu.requests).toHaveLength(3);
  });

  it('stream faults: an error event, a stall (idle timeout), a cut', async () => {
    const e = await collect(await b.stream({ botId: BOT, message: 'hello world [error 2]' }));
    expect(e.error).toMatchObject({ kind: 'stream_error', details: { partial: true } });
    const quick = testClient(emu.url, 'b', { streamIdleTimeoutMs: 200 }).service;
    const s = await collect(await quick.stream({ botId: BOT, message: 'hello world [stall 1]' }));
    expect(s.error).toMatchObject({ kind: 'interrupted', details: { partial: true } });
    expect(s.text.length).toBeGreaterThan(0);
    await quick.close();
    emu.setOptions({ streamFormat: 'plain' });
    const c = await collect(await b.stream({ botId: BOT, message: 'hello world [cut 1]' }));
    expect(c.error).toMatchObject({ kind: 'interrupted' });
  });
});
