import { afterEach, describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { ChatError, type ChatService } from '../core/chat-port.js';
import { createLogger } from '../logger.js';
import { abortableSleep } from './http.js';
import { collect, sleepMs, TEST_KEY, type TinyServer, testClient, tinyServer } from '../../test/support/upstream.js';

// The client over loopback against tiny node:http servers: wire formats, retries, cuts, timeouts.

let server: TinyServer | undefined;
let service: ChatService | undefined;
afterEach(async () => {
  await service?.close();
  await server?.close();
  service = undefined;
  server = undefined;
});

async function setup(handler: Parameters<typeof tinyServer>[0], form: 'a' | 'b' = 'a', extra = {}) {
  server = await tinyServer(handler);
  const client = testClient(server.url, form, extra);
  service = client.service;
  return { server, service: client.service, waits: client.waits };
}

/** Writes the pieces with a turn of the event loop between them, so they arrive as separate chunks. */
async function writeSlowly(res: ServerResponse, pieces: (string | Buffer)[]) {
  for (const p of pieces) {
    res.write(p);
    await sleepMs(2);
  }
}

const req = { botId: 'bot-1', message: 'hi' };

describe('stream formats on the wire', () => {
  const bodies: [string, string, (string | Buffer)[]][] = [
    [
      'text/event-stream',
      'SSE JSON',
      ['data: {"delta":"Hel', 'lo"}\n', '\ndata: {"delta":" wo', 'rld"}\n\ndata: [DONE]\n\n'],
    ],
    ['text/event-stream', 'SSE CR', ['data: Hello\r', '\rdata:  world\r\r', 'event: end\rdata: x\r\r']],
    ['application/x-ndjson', 'NDJSON', ['{"token":"Hello"}\n{"tok', 'en":" world"}\n', '{"done":true}\n']],
    ['application/json', 'JSON lines', ['{"content":"Hello"}\n', '{"content":" world"}\n']],
    ['application/json', 'JSON lines behind a preamble', [")]}'\n", '{"content":"Hello"}\n', '{"content":" world"}\n']],
    [
      'application/x-ndjson',
      'NDJSON behind a banner',
      ['chat service v2\r\n{"token":"Hello"}\n', '{"token":" world"}\n'],
    ],
    ['text/plain; charset=utf-8', 'plain', ['Hello', ' wor', 'ld']],
    ['', 'no type', [Buffer.from([0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x20]), Buffer.from('world')]],
  ];
  it.each(bodies)('%s (%s)', async (type, _name, pieces) => {
    await setup(async (_q, res) => {
      res.writeHead(200, type ? { 'content-type': type } : {});
      await writeSlowly(res, pieces);
      res.end();
    });
    const stream = await service!.stream(req);
    const got = await collect(stream);
    expect(got.error).toBeUndefined();
    expect(got.text).toBe('Hello world');
    expect(got.events.at(-1)).toEqual({ type: 'end' });
  });

  it('splits a multi-byte character between two writes', async () => {
    const bytes = Buffer.from('data: {"delta":"🌍 ok"}\n\n');
    await setup(async (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      await writeSlowly(res, [bytes.subarray(0, 18), bytes.subarray(18)]);
      res.end();
    });
    expect((await collect(await service!.stream(req))).text).toBe('🌍 ok');
  });

  it('Form A: the conversation id from X-Conversation-Id and from the events; the request carries key, body, accept', async () => {
    const { server: s } = await setup((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-conversation-id': 'conv-h' });
      res.end('data: {"type":"start","conversationId":"conv-e"}\n\ndata: {"delta":"x"}\n\n');
    });
    const stream = await service!.stream({
      ...req,
      conversationId: 'conv-h',
      metadata: { source: 'test', userId: 'U1' },
    });
    expect(stream.conversationId).toBe('conv-h');
    expect((await collect(stream)).events).toEqual([
      { type: 'ids', conversationId: 'conv-e' },
      { type: 'text', text: 'x' },
      { type: 'end' },
    ]);
    const sent = s.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.url).toBe('/api/v1/chat/bot-1/stream');
    expect(sent.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    expect(sent.headers.accept).toContain('text/event-stream');
    expect(JSON.parse(sent.body)).toEqual({
      message: 'hi',
      conversationId: 'conv-h',
      metadata: { source: 'test', userId: 'U1' },
    });
  });

  it('keeps the base URL path and reuses the connection after a finished stream', async () => {
    const ports = new Set<number>();
    server = await tinyServer((q, res) => {
      ports.add(q.socket.remotePort ?? 0);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: a\n\ndata: [DONE]\n\n');
    });
    service = testClient(`${server.url}/prefix/`, 'b').service;
    for (let i = 0; i < 3; i++) {
      const stream = await service.stream(req);
      expect((await collect(stream)).text).toBe('a');
      stream.cancel(); // after the end: nothing to abort, the connection stays usable
      await sleepMs(20); // the rest of the body is read after the end event, in the background
    }
    expect(server.requests.map((r) => r.url)).toEqual([
      '/prefix/v1/chat/stream',
      '/prefix/v1/chat/stream',
      '/prefix/v1/chat/stream',
    ]);
    expect(ports.size).toBe(1);
  });

  it('an end event on a body that stays open: the reply ends at once, the socket is let go soon after', async () => {
    let closedAt = 0;
    let closed!: () => void;
    const serverSawClose = new Promise<void>((r) => (closed = r));
    await setup((_q, res) => {
      res.on('close', () => {
        closedAt = Date.now();
        closed();
      });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"delta":"x"}\n\ndata: [DONE]\n\n');
    });
    const started = Date.now();
    const got = await collect(await service!.stream(req));
    expect(got.events).toEqual([{ type: 'text', text: 'x' }, { type: 'end' }]);
    // The reply ended on the end event, before the socket was let go (not by waiting for it).
    expect(closedAt).toBe(0);
    await serverSawClose;
    // A lower bound only (a slow machine lengthens it): the socket lingers, then is let go.
    expect(closedAt - started).toBeGreaterThanOrEqual(900);
  });

  it('an error event after text throws stream_error, keeping the text seen', async () => {
    await setup((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"delta":"par"}\n\nevent: error\ndata: {"error":{"code":"BOT_ERROR","message":"bot died"}}\n\n');
    });
    const got = await collect(await service!.stream(req));
    expect(got.text).toBe('par');
    expect(got.error).toBeInstanceOf(ChatError);
    expect(got.error).toMatchObject({
      kind: 'stream_error',
      details: { code: 'BOT_ERROR', partial: true, endpoint: 'A2 stream' },
    });
    expect((got.error as Error).message).toContain('bot died');
  });
});

describe('retries', () => {
  it('429: retried after Retry-After seconds, counted at the server', async () => {
    const { server: s, waits } = await setup((_q, res, _b, n) => {
      if (n <= 2) {
        res.writeHead(429, { 'retry-after': '2', 'content-type': 'application/json' });
        res.end('{"error":{"code":"RATE_LIMITED","message":"slow down"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
    expect((await collect(await service!.stream(req))).text).toBe('ok');
    expect(s.requests).toHaveLength(3);
    expect(waits).toEqual([2000, 2000]);
  });

  it('429 with an HTTP-date Retry-After', async () => {
    const { waits } = await setup((_q, res, _b, n) => {
      if (n === 1) {
        res.writeHead(429, { 'retry-after': new Date(Date.now() + 10_000).toUTCString() });
        res.end();
        return;
      }
      res.end('{"response":"fine"}');
    }, 'b');
    expect((await service!.send(req)).text).toBe('fine');
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(8_000);
    expect(waits[0]).toBeLessThanOrEqual(10_000);
  });

  it('429 beyond the 30 s budget: rate_limited with the hint, after waiting what fit', async () => {
    const { server: s, waits } = await setup((_q, res) => {
      res.writeHead(429, { 'retry-after': '12' });
      res.end();
    });
    const err = await service!.stream(req).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'rate_limited', details: { status: 429, retryAfterMs: 12_000 } });
    expect(waits).toEqual([12_000, 12_000]);
    expect(s.requests).toHaveLength(3);
  });

  it('500: 3 tries in all with growing jittered backoff, then server', async () => {
    const { server: s, waits } = await setup((_q, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":{"code":"BOT_ERROR","message":"internal"}}');
    }, 'b');
    const err = await service!.send(req).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'server', details: { status: 500, code: 'BOT_ERROR', endpoint: 'B1 send' } });
    expect(s.requests).toHaveLength(3);
    expect(waits).toEqual([250, 500]); // random 0.5 × 500 ms × 2^n
  });

  it('500 twice then a reply: the reply', async () => {
    const { server: s } = await setup((_q, res, _b, n) => {
      res.writeHead(n <= 2 ? 503 : 200, { 'content-type': 'application/x-ndjson' });
      res.end(n <= 2 ? '' : '{"delta":"third time"}\n');
    });
    expect((await collect(await service!.stream(req))).text).toBe('third time');
    expect(s.requests).toHaveLength(3);
  });

  it('a refused connection: 3 tries, then network', async () => {
    const dead = await tinyServer(() => {});
    const url = dead.url;
    await dead.close();
    const client = testClient(url, 'a');
    service = client.service;
    const err = await service.send(req).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'network', details: { code: 'ECONNREFUSED' } });
    expect(client.waits).toHaveLength(2);
  });

  it('a connection reset before the response: retried', async () => {
    const { server: s } = await setup((_q, res, _b, n) => {
      if (n === 1) res.socket?.destroy();
      else res.end('{"success":true,"data":{"response":"ok","conversationId":"c1","messageId":"m1"}}');
    });
    expect(await service!.send(req)).toEqual({ text: 'ok', conversationId: 'c1', messageId: 'm1' });
    expect(s.requests).toHaveLength(2);
  });

  it.each([401, 400, 403, 404, 410])('%i: never retried', async (status) => {
    const { server: s, waits } = await setup((_q, res) => {
      res.writeHead(status);
      res.end('{}');
    });
    await expect(service!.stream(req)).rejects.toBeInstanceOf(ChatError);
    expect(s.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('no retry once the reply started: a cut after the first delta is interrupted, one request', async () => {
    const { server: s } = await setup(async (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"delta":"first"}\n\n');
      await sleepMs(20);
      res.socket?.destroy();
    });
    const got = await collect(await service!.stream(req));
    expect(got.text).toBe('first');
    expect(got.error).toMatchObject({ kind: 'interrupted', details: { partial: true } });
    expect(s.requests).toHaveLength(1);
  });

  it('the waits are abortable by the request signal', async () => {
    server = await tinyServer((_q, res) => {
      res.writeHead(503);
      res.end();
    });
    let waiting!: () => void;
    const inRetryWait = new Promise<void>((r) => (waiting = r));
    service = testClient(server.url, 'a', {
      sleep: (ms: number, signal?: AbortSignal) => {
        waiting();
        return abortableSleep(ms, signal);
      },
      retry: { baseDelayMs: 60_000 },
      random: () => 1,
    }).service;
    const ac = new AbortController();
    const pending = service.send({ ...req, signal: ac.signal });
    await inRetryWait;
    ac.abort(new Error('shutting down'));
    await expect(pending).rejects.toThrow('shutting down');
    expect(server.requests).toHaveLength(1);
  });
});

describe('the end of a stream', () => {
  it('a reset before any text: interrupted, not partial', async () => {
    await setup(async (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': hello\n\n');
      await sleepMs(20);
      res.socket?.destroy();
    });
    const got = await collect(await service!.stream(req));
    expect(got.error).toMatchObject({ kind: 'interrupted', details: { partial: false } });
  });

  it('a stall: interrupted after the idle timeout, with the text so far', async () => {
    const { server: s } = await setup(
      (_q, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('so far');
      },
      'b',
      { streamIdleTimeoutMs: 150 },
    );
    const started = Date.now();
    const got = await collect(await service!.stream(req));
    expect(got.text).toBe('so far');
    expect(got.error).toMatchObject({ kind: 'interrupted', details: { partial: true, endpoint: 'B2 stream' } });
    expect((got.error as Error).message).toContain('sent nothing');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(s.requests).toHaveLength(1);
  });

  it('no response headers in time: timeout, not retried', async () => {
    const { server: s, waits } = await setup(() => {}, 'a', { requestTimeoutMs: 150 });
    const err = await service!.stream(req).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'timeout', details: { code: 'UND_ERR_HEADERS_TIMEOUT' } });
    expect(s.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('cancel() ends the iteration quietly and closes the connection at the server', async () => {
    let closed!: () => void;
    const serverSawClose = new Promise<void>((r) => {
      closed = r;
    });
    await setup((_q, res) => {
      res.on('close', () => closed());
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
    });
    const stream = await service!.stream(req);
    const seen: string[] = [];
    for await (const ev of stream) {
      if (ev.type === 'text') seen.push(ev.text);
      stream.cancel();
      stream.cancel();
    }
    expect(seen).toEqual(['one']);
    await serverSawClose;
  });

  it('cancel() while the iterator waits for bytes', async () => {
    await setup((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
    });
    const stream = await service!.stream(req);
    const it = stream[Symbol.asyncIterator]();
    expect((await it.next()).value).toEqual({ type: 'text', text: 'one' });
    const waiting = it.next(); // nothing more is sent: this read waits for bytes
    stream.cancel();
    expect(await waiting).toMatchObject({ done: true }); // quietly: no error
    expect((await collect(stream)).events).toEqual([]);
  });

  it('breaking out of the loop releases the connection', async () => {
    let closed!: () => void;
    const serverSawClose = new Promise<void>((r) => {
      closed = r;
    });
    await setup((_q, res) => {
      res.on('close', () => closed());
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('x');
    });
    for await (const ev of await service!.stream(req)) if (ev.type === 'text') break;
    await serverSawClose;
  });

  it("the caller's signal aborts a running stream with its reason", async () => {
    await setup((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('x');
    });
    const ac = new AbortController();
    const stream = await service!.stream({ ...req, signal: ac.signal });
    expect((await stream[Symbol.asyncIterator]().next()).value).toEqual({ type: 'text', text: 'x' });
    ac.abort(new Error('bye'));
    const got = await collect(stream);
    expect((got.error as Error).message).toBe('bye');
  });

  it('an unread stream whose connection dies raises no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      await setup(async (_q, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('x');
        await sleepMs(10);
        res.socket?.destroy();
      });
      const stream = await service!.stream(req);
      await sleepMs(100);
      const got = await collect(stream);
      expect(got.error).toMatchObject({ kind: 'interrupted' });
      await sleepMs(20);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('the API key', () => {
  it('is in no log line, at debug level, through retries and errors', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', destination: { write: (l: string) => lines.push(l) } });
    await setup(
      (q, res, _b, n) => {
        res.writeHead(n === 1 ? 503 : 401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: `echo ${q.headers.authorization}` }));
      },
      'a',
      { logger },
    );
    await expect(service!.send(req)).rejects.toMatchObject({ kind: 'unauthorized' });
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.some((l) => l.includes('retrying'))).toBe(true);
    expect(lines.join('')).not.toContain(TEST_KEY);
  });

  it('appears in no error message, even when the upstream echoes it', async () => {
    await setup((q, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `bad header ${q.headers.authorization}` }));
    });
    const err = (await service!.send(req).catch((e: unknown) => e)) as ChatError;
    expect(err.kind).toBe('bad_request');
    expect(err.message).toContain('bad header');
    expect(err.message).not.toContain(TEST_KEY);
    expect(JSON.stringify(err.details)).not.toContain(TEST_KEY);
  });

  it('leaves not even a part of it in a plain error body cut at 200 characters (the key straddling the cut)', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', destination: { write: (l: string) => lines.push(l) } });
    await setup(
      (q, res) => {
        res.writeHead(400, { 'content-type': 'text/html' });
        // A proxy's page that echoes the request: the key starts 10 characters before the cut.
        const key = (q.headers.authorization ?? '').replace(/^Bearer /, '');
        res.end(`${'x'.repeat(190)}${key} and more`);
      },
      'a',
      { logger },
    );
    const err = (await service!.send(req).catch((e: unknown) => e)) as ChatError;
    expect(err.kind).toBe('bad_request');
    const seen = `${err.message}${JSON.stringify(err.details)}${lines.join('')}`;
    // No 6 characters of the key in a row anywhere.
    for (let i = 0; i + 6 <= TEST_KEY.length; i++) expect(seen).not.toContain(TEST_KEY.slice(i, i + 6));
  });
});
