import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatService } from '../core/chat-port.js';
import { collect, type TinyServer, testClient, tinyServer } from '../../test/support/upstream.js';

// maxReplyChars (CHAT_REPLY_MAX_CHARS) over loopback: a stream that goes on is cut at the cap and
// its connection closed; a one-response body past its byte bound is refused without being read.

let server: TinyServer | undefined;
let service: ChatService | undefined;
afterEach(async () => {
  await service?.close();
  await server?.close();
  service = undefined;
  server = undefined;
});

const req = { botId: 'bot-1', message: 'hi' };
const MAX = 1000;

interface Writer {
  /** Resolves when the server sees its response closed, with what it wrote and whether it finished. */
  closed: Promise<{ written: number; finished: boolean }>;
}

/**
 * Writes `piece` until the connection closes (endless) or `total` bytes are written, respecting
 * backpressure, so what was written is what the client could have received.
 */
function writeUntilClosed(res: ServerResponse, piece: string | Buffer, total = Infinity): Writer {
  let written = 0;
  const closed = new Promise<{ written: number; finished: boolean }>((resolve) => {
    res.on('close', () => resolve({ written, finished: res.writableFinished }));
  });
  void (async () => {
    while (!res.destroyed && written < total) {
      const ok = res.write(piece);
      written += Buffer.byteLength(piece);
      if (!ok)
        await new Promise<void>((r) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            r();
          };
          res.on('drain', go);
          res.on('close', go);
        });
      else await new Promise((r) => setImmediate(r));
    }
    if (!res.destroyed) res.end();
  })();
  return { closed };
}

async function setup(onRequest: (res: ServerResponse) => Writer, form: 'a' | 'b' = 'a') {
  let writer!: Writer;
  server = await tinyServer((_q, res) => {
    writer = onRequest(res);
  });
  service = testClient(server.url, form, { maxReplyChars: MAX }).service;
  return { service, writer: () => writer };
}

describe('a stream past maxReplyChars', () => {
  it.each([
    ['SSE JSON', 'text/event-stream', 'data: {"delta":"0123456789"}\n\n'],
    ['SSE text', 'text/event-stream', 'data: 0123456789\n\n'],
    ['NDJSON', 'application/x-ndjson', '{"token":"0123456789"}\n'],
    ['JSON lines', 'application/json', '{"content":"0123456789"}\n'],
    ['plain', 'text/plain', '0123456789'],
  ])('%s: the text up to the cap, an end marked too_long, the connection closed', async (_name, type, piece) => {
    const { service, writer } = await setup((res) => {
      res.writeHead(200, { 'content-type': type });
      return writeUntilClosed(res, piece);
    });
    const got = await collect(await service.stream(req));
    expect(got.error).toBeUndefined();
    expect(got.text).toBe('0123456789'.repeat(MAX / 10));
    expect(got.events.at(-1)).toEqual({ type: 'end', reason: 'too_long' });
    const seen = await writer().closed;
    expect(seen.finished).toBe(false);
  });

  it('a line that never ends: too_long once the decoder holds back its bound, connection closed', async () => {
    const { service, writer } = await setup((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"delta":"');
      return writeUntilClosed(res, 'x'.repeat(1024));
    });
    const got = await collect(await service.stream(req));
    expect(got.error).toBeUndefined();
    expect(got.text).toBe('');
    expect(got.events).toEqual([{ type: 'end', reason: 'too_long' }]);
    const seen = await writer().closed;
    // 4 × 1000 + 64 kB held back at most; the socket buffers add to what the server could write.
    expect(seen.written).toBeLessThan(16 * 1024 * 1024);
  });

  it('a reply of exactly the cap ends normally; one character more is cut without half a pair', async () => {
    const exact = 'a'.repeat(MAX);
    const pair = `${'b'.repeat(MAX - 1)}🌍`;
    const bodies = [exact, pair];
    const { service } = await setup((res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return writeUntilClosed(res, bodies.shift() ?? '', 1);
    });
    const whole = await collect(await service.stream(req));
    expect(whole.text).toBe(exact);
    expect(whole.events.at(-1)).toEqual({ type: 'end' });
    const cut = await collect(await service.stream(req));
    expect(cut.text).toBe('b'.repeat(MAX - 1));
    expect(cut.events.at(-1)).toEqual({ type: 'end', reason: 'too_long' });
  });
});

describe('a one-response body past its bound', () => {
  const TEN_MB = 10 * 1024 * 1024;

  it.each([
    ['without a Content-Length', {}],
    ['with a Content-Length', { 'content-length': String(TEN_MB) }],
  ])('10 MB %s: too_long, not read to its end, the connection closed', async (_name, headers) => {
    const { service, writer } = await setup((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-conversation-id': 'c1', ...headers });
      res.write('{"success":true,"data":{"response":"');
      return writeUntilClosed(res, Buffer.alloc(64 * 1024, 0x61), TEN_MB - 64 * 1024);
    });
    const res = await service.send(req);
    expect(res).toEqual({ text: '', conversationId: 'c1', endReason: 'too_long' });
    const seen = await writer().closed;
    expect(seen.finished).toBe(false);
    expect(seen.written).toBeLessThan(TEN_MB - 64 * 1024);
  });

  it('a body within its bound whose reply is past the cap: the text up to the cap, too_long', async () => {
    const { service } = await setup((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ response: 'y'.repeat(MAX + 5), session_id: 's9' }));
      return { closed: Promise.resolve({ written: 0, finished: true }) };
    }, 'b');
    const res = await service.send(req);
    expect(res).toEqual({ text: 'y'.repeat(MAX), conversationId: 's9', endReason: 'too_long' });
  });

  it('a reply within the cap is untouched', async () => {
    const { service } = await setup((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: true, data: { response: 'z'.repeat(MAX), conversationId: 'c2' } }));
      return { closed: Promise.resolve({ written: 0, finished: true }) };
    });
    expect(await service.send(req)).toEqual({ text: 'z'.repeat(MAX), conversationId: 'c2' });
  });

  it('history has no reply cap but a body announced past 32 MiB is refused, not read', async () => {
    const { service, writer } = await setup((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(40 * 1024 * 1024) });
      return writeUntilClosed(res, Buffer.alloc(64 * 1024, 0x20));
    });
    await expect(service.history('bot-1', 'c1')).rejects.toMatchObject({
      kind: 'bad_request',
      details: { code: 'BODY_TOO_LARGE' },
    });
    expect((await writer().closed).finished).toBe(false);
  });
});
