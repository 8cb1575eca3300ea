import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pause } from './http.js';
import { type Emulator, startEmulator } from './index.js';
import { auth, get, KEY, post } from '../../test/support/emulator.js';

let emu: Emulator;
beforeEach(async () => {
  emu = await startEmulator({ apiKey: KEY, chunkDelayMs: 0, admin: true });
});
afterEach(async () => {
  await emu.close();
});

const A1 = '/api/v1/chat/demo-bot/message';
const A2 = '/api/v1/chat/demo-bot/stream';
const B1 = '/v1/chat/send';
const B2 = '/v1/chat/stream';

async function open(path: string, body: unknown, signal?: AbortSignal) {
  return request(`${emu.url}${path}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

/** Reads a streamed body to its end; returns the text and the error that ended it, if any. */
async function drain(body: AsyncIterable<unknown>): Promise<{ text: string; error?: unknown }> {
  const chunks: Buffer[] = [];
  try {
    for await (const c of body) chunks.push(c as Buffer);
    return { text: Buffer.concat(chunks).toString('utf8') };
  } catch (error) {
    return { text: Buffer.concat(chunks).toString('utf8'), error };
  }
}

describe('status faults', () => {
  it('answer the next N matching requests with the status and Retry-After, then recover', async () => {
    emu.injectFault({ status: 429, times: 2, retryAfterSeconds: 3 });
    for (let i = 0; i < 2; i++) {
      const r = await post(emu.url, B1, { bot_id: 'demo-bot', message: 'hi' });
      expect(r.status).toBe(429);
      expect(r.headers['retry-after']).toBe('3');
      expect(r.json()).toEqual({ error: { code: 'RATE_LIMITED', message: 'Rate limit exceeded, retry later' } });
    }
    expect((await post(emu.url, B1, { bot_id: 'demo-bot', message: 'hi' })).status).toBe(200);
    expect(emu.requests.map((r) => r.status)).toEqual([429, 429, 200]);
  });

  it('default codes and Retry-After; Form A shape; endpoint, form and bot filters', async () => {
    emu.injectFault({ status: 500, endpoint: 'stream' });
    expect((await post(emu.url, A1, { message: 'hi' })).status).toBe(200);
    const s = await post(emu.url, A2, { message: 'hi' });
    expect(s.status).toBe(500);
    expect(s.json()).toEqual({ success: false, error: 'Internal bot error' });

    emu.injectFault({ status: 429 });
    const r = await post(emu.url, A1, { message: 'hi' });
    expect(r.headers['retry-after']).toBe('1');

    emu.injectFault({ status: 500, form: 'b', code: 'CUSTOM', message: 'boom' });
    expect((await post(emu.url, A1, { message: 'hi' })).status).toBe(200);
    expect((await post(emu.url, B2, { bot_id: 'demo-bot', message: 'hi' })).json()).toEqual({
      error: { code: 'CUSTOM', message: 'boom' },
    });

    emu.injectFault({ status: 503, endpoint: 'history' });
    expect((await post(emu.url, A1, { message: 'hi' })).status).toBe(200);
    expect((await get(emu.url, '/v1/chat/history?session_id=x')).status).toBe(503);
    emu.injectFault({ status: 500, endpoint: 'list', botId: 'demo-bot' });
    expect((await get(emu.url, '/api/v1/chat/demo-bot/conversations')).status).toBe(500);
    expect((await get(emu.url, '/api/v1/chat/demo-bot/conversations')).status).toBe(200);
  });

  it('rejects a malformed fault', () => {
    expect(() => emu.injectFault({ times: 1 })).toThrow(/needs status/);
    expect(() => emu.injectFault({ status: 42 })).toThrow(/HTTP status/);
    expect(() => emu.injectFault({ status: 500, times: 0 })).toThrow(/times/);
  });

  it('[status S] answers every such message with S', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await post(emu.url, B1, { bot_id: 'demo-bot', message: 'please [status 500]' });
      expect(r.status).toBe(500);
      expect(r.json().error.code).toBe('BOT_ERROR');
    }
    const a = await post(emu.url, A1, { message: '[status 401]' });
    expect(a.status).toBe(401);
    const rl = await post(emu.url, B2, { bot_id: 'demo-bot', message: '[status 429]' });
    expect(rl.status).toBe(429);
    expect(rl.headers['retry-after']).toBe('1');
    // Refused turns leave no conversation behind.
    expect((await get(emu.url, '/api/v1/chat/demo-bot/conversations')).json().data.pagination.total).toBe(0);
    expect((await get(emu.url, '/v1/chat/conversations')).json().conversations).toEqual([]);
  });
});

describe('stream faults', () => {
  it('[cut N] destroys the connection after N chunks, without an end event', async () => {
    const res = await open(A2, { message: 'abcdefghijklmnop [chunks 4] [cut 2]' });
    expect(res.statusCode).toBe(200);
    const { text, error } = await drain(res.body);
    expect(error).toBeDefined();
    expect(text.match(/"type":"delta"/g)).toHaveLength(2);
    expect(text).not.toContain('"type":"done"');
    await vi.waitFor(() => expect(emu.openStreams).toBe(0));
  });

  it('an injected cut fault on a plain stream resets after the text', async () => {
    emu.setOptions({ streamFormat: 'plain' });
    emu.injectFault({ cut: 99, endpoint: 'stream' });
    const res = await open(B2, { bot_id: 'demo-bot', message: 'hello' });
    const { text, error } = await drain(res.body);
    expect(text).toBe('You said: hello');
    expect(error).toBeDefined();
    // Only once: the next stream ends normally.
    const next = await open(B2, { bot_id: 'demo-bot', message: 'hello' });
    expect((await drain(next.body)).error).toBeUndefined();
  });

  it.each([
    [
      'sse-json',
      'event: error\ndata: {"type":"error","error":"The bot failed while answering (emulated)","code":"BOT_ERROR"}\n\n',
    ],
    ['sse-text', 'event: error\ndata: The bot failed while answering (emulated)\n\n'],
    ['ndjson', '{"error":"The bot failed while answering (emulated)","code":"BOT_ERROR"}\n'],
  ] as const)('[error N] in %s sends an error event and ends the body', async (format, frame) => {
    emu.setOptions({ streamFormat: format });
    const res = await open(B2, { bot_id: 'demo-bot', message: 'x [chunks 3] [error 1]' });
    const { text, error } = await drain(res.body);
    expect(error).toBeUndefined();
    expect(text.endsWith(frame)).toBe(true);
    expect(text).not.toMatch(/"done"|\[DONE\]/);
  });

  it('[error N] in plain cuts the connection (no error event exists)', async () => {
    emu.setOptions({ streamFormat: 'plain' });
    const res = await open(A2, { message: 'x [error 0]' });
    expect((await drain(res.body)).error).toBeDefined();
  });

  it('[stall N] keeps the connection open without bytes until the emulator closes, promptly', async () => {
    const res = await open(A2, { message: 'abcdefgh [chunks 4] [stall 1]' });
    const it = res.body[Symbol.asyncIterator]();
    let seen = '';
    while (!seen.includes('"type":"delta"')) seen += String((await it.next()).value);
    const pending = it.next().then(
      (r) => ({ done: r.done, error: undefined as unknown }),
      (error: unknown) => ({ done: true, error }),
    );
    const raced = await Promise.race([pending, pause(150).then(() => 'still open')]);
    expect(raced).toBe('still open');
    expect(emu.openStreams).toBe(1);
    // A stall never ends by itself: close() returning at all (within the test's timeout) shows it
    // did not wait for the stall, and the stream is gone by then.
    await emu.close();
    expect(emu.openStreams).toBe(0);
    const end = await pending;
    expect(end.done).toBe(true);
    expect(emu.openStreams).toBe(0);
  });

  it('a client that goes away stops the stream (no assistant message stored, nothing left open)', async () => {
    const ac = new AbortController();
    const res = await open(
      B2,
      { bot_id: 'demo-bot', message: '[long 5000] [delay 10]', session_id: 'gone' },
      ac.signal,
    );
    const it = res.body[Symbol.asyncIterator]();
    await it.next();
    expect(emu.openStreams).toBe(1);
    ac.abort();
    await vi.waitFor(() => expect(emu.openStreams).toBe(0));
    expect(emu.conversation('gone')?.messages.map((m) => m.role)).toEqual(['user']);
  });

  it('a stall held by a client that leaves is released', async () => {
    const ac = new AbortController();
    const res = await open(A2, { message: '[stall 0]' }, ac.signal);
    expect(res.statusCode).toBe(200);
    expect(emu.openStreams).toBe(1);
    ac.abort();
    await vi.waitFor(() => expect(emu.openStreams).toBe(0));
  });
});

describe('faults on the one-response endpoints', () => {
  it('[cut N] resets the connection without an answer', async () => {
    await expect(post(emu.url, A1, { message: '[cut 0]' })).rejects.toThrow();
  });

  it('[error N] answers 500 BOT_ERROR', async () => {
    const r = await post(emu.url, B1, { bot_id: 'demo-bot', message: '[error 0]' });
    expect(r.status).toBe(500);
    expect(r.json().error.code).toBe('BOT_ERROR');
    expect((await post(emu.url, A1, { message: '[error 0]' })).status).toBe(500);
    await expect(post(emu.url, A1, { message: '[cut 0]' })).rejects.toThrow();
    // Failed turns leave no conversation behind.
    expect((await get(emu.url, '/api/v1/chat/demo-bot/conversations')).json().data.pagination.total).toBe(0);
    expect((await get(emu.url, '/v1/chat/conversations')).json().conversations).toEqual([]);
  });

  it('[stall N] never answers; close() ends it promptly', async () => {
    const pending = post(emu.url, A1, { message: '[stall 0]' }).then(
      () => 'answered',
      () => 'failed',
    );
    expect(await Promise.race([pending, pause(150).then(() => 'waiting')])).toBe('waiting');
    // A stall never ends by itself: close() returning at all (within the test's timeout) shows it
    // did not wait for the stall.
    await emu.close();
    expect(await pending).toBe('failed');
  });

  it('[delay MS] delays the answer', async () => {
    const t0 = Date.now();
    expect((await post(emu.url, A1, { message: 'slow [delay 120]' })).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(110);
  });
});

describe('admin paths', () => {
  it('need the key and drive faults, options, expiry, the request log and reset', async () => {
    expect((await post(emu.url, '/_emulator/reset', {}, {})).status).toBe(401);
    const q = await post(emu.url, '/_emulator/faults', { status: 500, times: 1 });
    expect(q.json()).toEqual({ ok: true, queued: 1 });
    expect((await post(emu.url, A1, { message: 'hi' })).status).toBe(500);
    expect((await post(emu.url, '/_emulator/faults', { times: 1 })).status).toBe(400);

    const sent = (await post(emu.url, A1, { message: 'hi' })).json().data;
    const log = (await get(emu.url, '/_emulator/requests')).json().requests;
    expect(log.map((r: { status: number }) => r.status)).toEqual([500, 200]);

    expect((await post(emu.url, '/_emulator/expire', { id: sent.conversationId })).json()).toEqual({ expired: true });
    expect((await post(emu.url, A1, { message: 'hi', conversationId: sent.conversationId })).status).toBe(404);

    const o = await post(emu.url, '/_emulator/options', { streamFormat: 'ndjson', chunkDelayMs: 1 });
    expect(o.json().options).toMatchObject({ streamFormat: 'ndjson', chunkDelayMs: 1 });
    expect(emu.options.streamFormat).toBe('ndjson');
    expect((await post(emu.url, '/_emulator/options', { streamFormat: 'xml' })).status).toBe(400);
    expect((await get(emu.url, '/_emulator/options')).json().options.streamFormat).toBe('ndjson');

    await post(emu.url, '/_emulator/faults', [{ status: 500 }, { status: 500 }]);
    expect((await post(emu.url, '/_emulator/reset', {})).status).toBe(200);
    expect(emu.requests).toHaveLength(0);
    expect((await post(emu.url, A1, { message: 'hi' })).status).toBe(200);
  });
});

describe('pause', () => {
  it('with 0 ms lets queued immediates run first', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('immediate'));
    await pause(0);
    order.push('after pause');
    expect(order).toEqual(['immediate', 'after pause']);
  });

  it('ends early when aborted', async () => {
    const ac = new AbortController();
    const p = pause(10_000, ac.signal);
    ac.abort();
    // Ended in the same turn of the event loop as the abort, not by its 10 s timer.
    const next = new Promise((r) => setImmediate(() => r('next turn')));
    expect(await Promise.race([p.then(() => 'ended'), next])).toBe('ended');
  });
});
