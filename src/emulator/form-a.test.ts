import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from './index.js';
import { KEY, auth, get, post } from '../../test/support/emulator.js';

let emu: Emulator;
let clock = Date.parse('2026-01-01T00:00:00Z');
beforeEach(async () => {
  clock = Date.parse('2026-01-01T00:00:00Z');
  emu = await startEmulator({ apiKey: KEY, bots: ['demo-bot', 'other-bot'], chunkDelayMs: 0, now: () => clock });
});
afterEach(async () => {
  await emu.close();
});

const A = '/api/v1/chat';

async function send(message: string, conversationId?: string, bot = 'demo-bot') {
  return post(emu.url, `${A}/${bot}/message`, { message, ...(conversationId ? { conversationId } : {}) });
}

describe('Form A: A1 message', () => {
  it('starts a conversation, continues it, and stores both sides', async () => {
    const first = await send('hello');
    expect(first.status).toBe(200);
    const d1 = first.json().data;
    expect(d1).toEqual({
      response: 'You said: hello',
      conversationId: expect.stringMatching(/^conv_[0-9a-f]{16}$/),
      messageId: expect.stringMatching(/^msg_/),
    });
    clock += 1000;
    const second = await send('again', d1.conversationId);
    expect(second.json().data.conversationId).toBe(d1.conversationId);

    const h = await get(emu.url, `${A}/demo-bot/conversations/${d1.conversationId}`);
    expect(h.status).toBe(200);
    const data = h.json().data;
    expect(data.conversationId).toBe(d1.conversationId);
    expect(data.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'hello'],
      ['assistant', 'You said: hello'],
      ['user', 'again'],
      ['assistant', 'You said: again'],
    ]);
    expect(data.messages[1].id).toBe(d1.messageId);
    expect(data.messages[0].timestamp).toBe('2026-01-01T00:00:00.000Z');
    expect(data.metadata).toEqual({ createdAt: '2026-01-01T00:00:00.000Z', messageCount: 4 });
  });

  it('gives the same text for the same message (deterministic)', async () => {
    const a = (await send('same [long 500]')).json().data.response;
    const b = (await send('same [long 500]')).json().data.response;
    expect(a).toBe(b);
    expect(a).toHaveLength(500);
  });

  it('records what it received', async () => {
    const meta = { source: 'slack', channelId: 'C1' };
    await post(emu.url, `${A}/demo-bot/message`, { message: 'hi', metadata: meta });
    expect(emu.requests).toHaveLength(1);
    const r = emu.requests[0];
    expect(r).toMatchObject({
      form: 'a',
      endpoint: 'send',
      method: 'POST',
      path: `${A}/demo-bot/message`,
      botId: 'demo-bot',
      message: 'hi',
      conversationId: undefined,
      metadata: meta,
      at: clock,
      status: 200,
    });
    expect(r?.headers.authorization).toBeUndefined();
    const id = (await send('x')).json().data.conversationId;
    expect(emu.conversation(id)?.messages.map((m) => m.content)).toEqual(['x', 'You said: x']);
    expect(emu.requests[1]?.conversationId).toBeUndefined();
    await send('y', id);
    expect(emu.requests[2]?.conversationId).toBe(id);
  });

  it('keeps at most maxRecordedRequests entries, dropping the oldest', async () => {
    emu.setOptions({ maxRecordedRequests: 2 });
    for (const m of ['one', 'two', 'three']) await send(m);
    expect(emu.requests.map((r) => r.message)).toEqual(['two', 'three']);
  });

  it('answers 404 for an unknown bot and an unknown conversation, with distinct messages', async () => {
    const bot = await send('hi', undefined, 'nope');
    expect(bot.status).toBe(404);
    expect(bot.json()).toEqual({ success: false, error: 'Bot not found: nope' });
    const conv = await send('hi', 'conv_missing');
    expect(conv.status).toBe(404);
    expect(conv.json()).toEqual({ success: false, error: 'Conversation not found: conv_missing' });
    // A conversation of another bot is not found either.
    const id = (await send('hi')).json().data.conversationId;
    expect((await send('hi', id, 'other-bot')).status).toBe(404);
  });

  it('answers 400 for a missing, empty or too long message and for bad JSON', async () => {
    for (const body of [
      {},
      { message: '' },
      { message: 42 },
      { message: 'ok', metadata: 'x' },
      { message: 'ok', conversationId: 5 },
    ]) {
      const r = await post(emu.url, `${A}/demo-bot/message`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json().success).toBe(false);
    }
    const bad = await post(emu.url, `${A}/demo-bot/message`, '{nope');
    expect(bad.status).toBe(400);
    emu.setOptions({ maxMessageChars: 10 });
    expect((await send('x'.repeat(10))).status).toBe(200);
    const long = await send('x'.repeat(11));
    expect(long.status).toBe(400);
    expect(long.json().error).toMatch(/too long/);
  });

  it('expire() makes a conversation unknown (404), and so does idling past sessionIdleSeconds', async () => {
    const id = (await send('hi')).json().data.conversationId;
    expect(emu.expire(id)).toBe(true);
    expect((await send('hi', id)).status).toBe(404);
    expect((await get(emu.url, `${A}/demo-bot/conversations/${id}`)).status).toBe(404);

    emu.setOptions({ sessionIdleSeconds: 60 });
    const id2 = (await send('hi')).json().data.conversationId;
    clock += 60_000;
    expect((await send('still here', id2)).status).toBe(200);
    clock += 60_001;
    expect((await send('too late', id2)).status).toBe(404);
    expect(emu.expire('conv_never')).toBe(false);
  });
});

describe('Form A: A4 list', () => {
  it('pages with page/limit, caps limit at 100, filters with since', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await send(`message ${i}`)).json().data.conversationId);
      clock += 1000;
    }
    const p1 = (await get(emu.url, `${A}/demo-bot/conversations?limit=2`)).json().data;
    expect(p1.pagination).toEqual({ page: 1, limit: 2, total: 5, hasMore: true });
    // Most recently updated first.
    expect(p1.conversations.map((c: { id: string }) => c.id)).toEqual([ids[4], ids[3]]);
    expect(p1.conversations[0]).toEqual({
      id: ids[4],
      preview: 'You said: message 4',
      messageCount: 2,
      createdAt: '2026-01-01T00:00:04.000Z',
      updatedAt: '2026-01-01T00:00:04.000Z',
    });
    const p3 = (await get(emu.url, `${A}/demo-bot/conversations?limit=2&page=3`)).json().data;
    expect(p3.conversations.map((c: { id: string }) => c.id)).toEqual([ids[0]]);
    expect(p3.pagination.hasMore).toBe(false);

    const def = (await get(emu.url, `${A}/demo-bot/conversations`)).json().data;
    expect(def.pagination).toEqual({ page: 1, limit: 20, total: 5, hasMore: false });
    expect((await get(emu.url, `${A}/demo-bot/conversations?limit=500`)).json().data.pagination.limit).toBe(100);

    const since = (await get(emu.url, `${A}/demo-bot/conversations?since=2026-01-01T00:00:02.500Z`)).json().data;
    expect(since.conversations.map((c: { id: string }) => c.id)).toEqual([ids[4], ids[3]]);

    expect((await get(emu.url, `${A}/other-bot/conversations`)).json().data.pagination.total).toBe(0);
    for (const q of ['page=0', 'limit=abc', 'since=yesterday']) {
      expect((await get(emu.url, `${A}/demo-bot/conversations?${q}`)).status, q).toBe(400);
    }
    expect((await get(emu.url, `${A}/nope/conversations`)).status).toBe(404);
  });
});

describe('Form A: auth and routing', () => {
  it('answers 401 without or with a wrong key, on every path', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: KEY }]) {
      const r = await post(emu.url, `${A}/demo-bot/message`, { message: 'hi' }, headers);
      expect(r.status).toBe(401);
      expect(r.json()).toEqual({ success: false, error: 'Invalid or missing API key' });
      expect((await get(emu.url, `${A}/demo-bot/conversations`, headers)).status).toBe(401);
      expect((await get(emu.url, '/nowhere', headers)).status).toBe(401);
    }
    expect(emu.requests.filter((r) => r.status === 401)).toHaveLength(6);
    expect(
      (await post(emu.url, `${A}/demo-bot/message`, { message: 'hi' }, { authorization: `bearer ${KEY}` })).status,
    ).toBe(200);
  });

  it('answers 404 for unknown paths and 405 for a wrong method', async () => {
    expect((await get(emu.url, '/api/v1/chat/demo-bot/unknown')).status).toBe(404);
    const m = await get(emu.url, `${A}/demo-bot/message`);
    expect(m.status).toBe(405);
    expect(m.headers.allow).toBe('POST');
  });

  it('serves only Form A with form "a"', async () => {
    const only = await startEmulator({ apiKey: KEY, form: 'a', chunkDelayMs: 0 });
    try {
      expect((await post(only.url, `${A}/demo-bot/message`, { message: 'hi' })).status).toBe(200);
      const b = await post(only.url, '/v1/chat/send', { bot_id: 'demo-bot', message: 'hi' });
      expect(b.status).toBe(404);
      expect(b.json().error.code).toBe('NOT_FOUND');
    } finally {
      await only.close();
    }
  });

  it('takes URL-encoded bot ids', async () => {
    emu.setOptions({ bots: ['bot with space'] });
    const r = await post(emu.url, `${A}/${encodeURIComponent('bot with space')}/message`, { message: 'hi' }, auth);
    expect(r.status).toBe(200);
    expect(emu.requests.at(-1)?.botId).toBe('bot with space');
  });
});
