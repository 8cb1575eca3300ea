import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from './index.js';
import { KEY, get, post } from '../../test/support/emulator.js';

let emu: Emulator;
let clock = 0;
beforeEach(async () => {
  clock = Date.parse('2026-01-01T00:00:00Z');
  emu = await startEmulator({
    apiKey: KEY,
    bots: ['demo-bot', 'b2'],
    chunkDelayMs: 0,
    sessionIdleSeconds: 3600,
    now: () => clock,
  });
});
afterEach(async () => {
  await emu.close();
});

const send = (body: Record<string, unknown>) => post(emu.url, '/v1/chat/send', { bot_id: 'demo-bot', ...body });

describe('Form B: B1 send', () => {
  it('generates a session id when omitted and keeps context under it', async () => {
    const r = await send({ message: 'hello' });
    expect(r.status).toBe(200);
    const body = r.json();
    expect(body).toEqual({
      response: 'You said: hello',
      session_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      message_id: expect.stringMatching(/^msg_/),
    });
    await send({ message: 'more', session_id: body.session_id });
    expect(emu.conversation(body.session_id)?.messages).toHaveLength(4);
  });

  it('an unknown session_id starts a session with that id', async () => {
    const r = await send({ message: 'hi', session_id: 'my-own-id' });
    expect(r.json().session_id).toBe('my-own-id');
    expect(emu.conversation('my-own-id')?.botId).toBe('demo-bot');
    expect(emu.requests[0]).toMatchObject({
      form: 'b',
      endpoint: 'send',
      botId: 'demo-bot',
      message: 'hi',
      conversationId: 'my-own-id',
      session_id: 'my-own-id',
    });
  });

  it('errors: INVALID_BOT_ID, MESSAGE_TOO_LONG, missing message, UNAUTHORIZED', async () => {
    const bot = await send({ bot_id: 'nope', message: 'hi' });
    expect(bot.status).toBe(400);
    expect(bot.json()).toEqual({ error: { code: 'INVALID_BOT_ID', message: 'Unknown bot_id: nope' } });
    expect((await post(emu.url, '/v1/chat/send', { message: 'hi' })).json().error.code).toBe('INVALID_BOT_ID');

    emu.setOptions({ maxMessageChars: 5 });
    const long = await send({ message: '123456' });
    expect(long.status).toBe(400);
    expect(long.json().error.code).toBe('MESSAGE_TOO_LONG');
    expect((await send({ message: '12345' })).status).toBe(200);

    for (const body of [{}, { message: '' }, { message: 'ok', session_id: 3 }]) {
      const r = await send(body);
      expect(r.status).toBe(400);
      expect(r.json().error.code).toBe('INVALID_REQUEST');
    }
    const unauth = await post(
      emu.url,
      '/v1/chat/send',
      { bot_id: 'demo-bot', message: 'hi' },
      { authorization: 'Bearer nope' },
    );
    expect(unauth.status).toBe(401);
    expect(unauth.json()).toEqual({ error: { code: 'UNAUTHORIZED', message: 'Invalid or missing API key' } });
    expect((await get(emu.url, '/v1/chat/history?session_id=x', {})).json().error.code).toBe('UNAUTHORIZED');
    expect((await get(emu.url, '/v1/nothing', {})).status).toBe(401);
  });

  it('a session idle longer than sessionIdleSeconds answers 410 SESSION_EXPIRED once, then is forgotten', async () => {
    const sid = (await send({ message: 'hi' })).json().session_id;
    clock += 3600_000;
    expect((await send({ message: 'in time', session_id: sid })).status).toBe(200);
    clock += 3600_001;
    const r = await send({ message: 'late', session_id: sid });
    expect(r.status).toBe(410);
    expect(r.json()).toEqual({ error: { code: 'SESSION_EXPIRED', message: `Session expired: ${sid}` } });
    // Forgotten: the same id now starts a fresh session.
    const again = await send({ message: 'new start', session_id: sid });
    expect(again.status).toBe(200);
    expect(emu.conversation(sid)?.messages.map((m) => m.content)).toEqual(['new start', 'You said: new start']);
  });

  it('expire() forces SESSION_EXPIRED on the next use, also for history and streams', async () => {
    const sid = (await send({ message: 'hi' })).json().session_id;
    emu.expire(sid);
    const h = await get(emu.url, `/v1/chat/history?session_id=${sid}`);
    expect(h.status).toBe(410);
    expect(h.json().error.code).toBe('SESSION_EXPIRED');
    expect((await get(emu.url, `/v1/chat/history?session_id=${sid}`)).json().error.code).toBe('SESSION_NOT_FOUND');

    const sid2 = (await send({ message: 'hi' })).json().session_id;
    emu.expire(sid2);
    const s = await post(emu.url, '/v1/chat/stream', { bot_id: 'demo-bot', message: 'x', session_id: sid2 });
    expect(s.status).toBe(410);
  });
});

describe('Form B: B3 history', () => {
  it('pages with limit, before and after (message ids), in chronological order', async () => {
    const sid = 's1';
    for (let i = 0; i < 5; i++) {
      await send({ message: `m${i}`, session_id: sid });
      clock += 1000;
    }
    const all = (await get(emu.url, `/v1/chat/history?session_id=${sid}`)).json();
    expect(all.session_id).toBe(sid);
    expect(all.has_more).toBe(false);
    expect(all.messages).toHaveLength(10);
    expect(Object.keys(all.messages[0]).sort()).toEqual(['content', 'id', 'role', 'timestamp']);
    const contents = all.messages.map((m: { content: string }) => m.content);
    const ids = all.messages.map((m: { id: string }) => m.id);

    const latest = (await get(emu.url, `/v1/chat/history?session_id=${sid}&limit=3`)).json();
    expect(latest.messages.map((m: { content: string }) => m.content)).toEqual(contents.slice(7));
    expect(latest.has_more).toBe(true);

    const older = (await get(emu.url, `/v1/chat/history?session_id=${sid}&limit=3&before=${ids[7]}`)).json();
    expect(older.messages.map((m: { id: string }) => m.id)).toEqual(ids.slice(4, 7));
    expect(older.has_more).toBe(true);
    const oldest = (await get(emu.url, `/v1/chat/history?session_id=${sid}&limit=3&before=${ids[2]}`)).json();
    expect(oldest.messages.map((m: { id: string }) => m.id)).toEqual(ids.slice(0, 2));
    expect(oldest.has_more).toBe(false);

    const newer = (await get(emu.url, `/v1/chat/history?session_id=${sid}&limit=4&after=${ids[3]}`)).json();
    expect(newer.messages.map((m: { id: string }) => m.id)).toEqual(ids.slice(4, 8));
    expect(newer.has_more).toBe(true);
    const between = (await get(emu.url, `/v1/chat/history?session_id=${sid}&after=${ids[1]}&before=${ids[4]}`)).json();
    expect(between.messages.map((m: { id: string }) => m.id)).toEqual(ids.slice(2, 4));

    expect((await get(emu.url, `/v1/chat/history?session_id=${sid}&before=msg_nope`)).status).toBe(400);
    expect((await get(emu.url, '/v1/chat/history')).status).toBe(400);
    expect((await get(emu.url, '/v1/chat/history?session_id=unknown')).status).toBe(404);
    expect(emu.requests.at(-1)).toMatchObject({
      endpoint: 'history',
      conversationId: 'unknown',
      session_id: 'unknown',
      query: { session_id: 'unknown' },
    });
  });
});

describe('Form B: B4 conversations', () => {
  it('lists sessions of a bot, most recent first, with limit and has_more', async () => {
    for (const [i, sid] of ['x', 'y', 'z'].entries()) {
      await send({ message: `hello ${i}`, session_id: sid });
      clock += 1000;
    }
    await post(emu.url, '/v1/chat/send', { bot_id: 'b2', message: 'other', session_id: 'w' });
    const r = (await get(emu.url, '/v1/chat/conversations?bot_id=demo-bot&limit=2')).json();
    expect(r.has_more).toBe(true);
    expect(r.conversations).toEqual([
      {
        session_id: 'z',
        bot_id: 'demo-bot',
        preview: 'You said: hello 2',
        message_count: 2,
        created_at: '2026-01-01T00:00:02.000Z',
        updated_at: '2026-01-01T00:00:02.000Z',
      },
      expect.objectContaining({ session_id: 'y' }),
    ]);
    expect((await get(emu.url, '/v1/chat/conversations?bot_id=demo-bot')).json().conversations).toHaveLength(3);
    expect((await get(emu.url, '/v1/chat/conversations')).json().conversations).toHaveLength(4);
    const bad = await get(emu.url, '/v1/chat/conversations?bot_id=nope');
    expect(bad.status).toBe(400);
    expect(bad.json().error.code).toBe('INVALID_BOT_ID');
    expect((await get(emu.url, '/v1/chat/conversations?limit=-1')).status).toBe(400);
    // Idle sessions are not listed.
    clock += 3600_000 * 2;
    expect((await get(emu.url, '/v1/chat/conversations')).json().conversations).toHaveLength(0);
  });

  it('serves only Form B with form "b"', async () => {
    const only = await startEmulator({ apiKey: KEY, form: 'b' });
    try {
      expect((await post(only.url, '/api/v1/chat/demo-bot/message', { message: 'hi' })).status).toBe(404);
      expect((await post(only.url, '/v1/chat/send', { bot_id: 'demo-bot', message: 'hi' })).status).toBe(200);
    } finally {
      await only.close();
    }
  });
});
