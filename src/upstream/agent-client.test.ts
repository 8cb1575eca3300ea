import { afterEach, describe, expect, it } from 'vitest';
import type { ChatService } from '../core/chat-port.js';
import {
  AGENT_FIXTURES,
  ANSWER,
  CONTENT_TYPES,
  encodeFrames,
  type WireFormat,
} from '../../test/support/agent-streams.js';
import { collect, type TinyServer, testClient, tinyServer } from '../../test/support/upstream.js';

// An agent's stream through the real client (undici over loopback, Form A and Form B): the port's
// stream yields the answer text, the steps, sources and files in order, then the end; the steps
// and files do not count toward the reply's character cap, the text does.

let server: TinyServer | undefined;
let service: ChatService | undefined;
afterEach(async () => {
  await service?.close();
  await server?.close();
  service = undefined;
  server = undefined;
});

const req = { botId: 'bot-1', message: 'hi' };

async function streamOf(body: string, contentType: string, form: 'a' | 'b', extra = {}) {
  server = await tinyServer((_q, res) => {
    res.writeHead(200, { 'content-type': contentType });
    // Written in small pieces: the events straddle network writes.
    const bytes = Buffer.from(body);
    for (let at = 0; at < bytes.length; at += 7) res.write(bytes.subarray(at, at + 7));
    res.end();
  });
  service = testClient(server.url, form, extra).service;
  return collect(await service.stream(req));
}

describe('an agent reply through the client, both forms', () => {
  for (const form of ['a', 'b'] as const) {
    for (const format of ['sse', 'ndjson', 'json'] as WireFormat[]) {
      it(`Form ${form.toUpperCase()}, ${format}: every protocol`, async () => {
        for (const fixture of AGENT_FIXTURES) {
          const got = await streamOf(encodeFrames(fixture.frames, format), CONTENT_TYPES[format], form);
          expect(got.error, fixture.protocol).toBeUndefined();
          expect(got.text, fixture.protocol).toBe(ANSWER);
          const steps = got.events.flatMap((e) => (e.type === 'step' ? [e.step] : []));
          const sources = got.events.flatMap((e) => (e.type === 'source' ? [e.source] : []));
          expect(steps, fixture.protocol).toEqual(fixture.steps);
          expect(sources, fixture.protocol).toEqual(fixture.sources);
          const files = got.events.flatMap((e) => (e.type === 'file' ? [e.file] : []));
          expect(files, fixture.protocol).toEqual(fixture.files);
          expect(got.events.at(-1), fixture.protocol).toEqual({ type: 'end' });
          await service?.close();
          await server?.close();
        }
      });
    }
  }
});

describe('the reply cap counts text only', () => {
  it('steps, sources and files around a reply at the cap leave it whole', async () => {
    const b64 = Buffer.alloc(5000, 1).toString('base64');
    const body =
      'event: status\ndata: {"id":"s","text":"Searching the web"}\n\n' +
      `event: file\ndata: {"name":"blob.bin","data":"${b64}"}\n\n` +
      `data: {"delta":"${'x'.repeat(20)}"}\n\n` +
      'event: source\ndata: {"url":"https://s.example/"}\n\n' +
      'event: status\ndata: {"id":"s","state":"done"}\n\n';
    const got = await streamOf(body, 'text/event-stream', 'a', { maxReplyChars: 20 });
    expect(got.text).toBe('x'.repeat(20));
    expect(got.events.at(-1)).toEqual({ type: 'end' });
    expect(got.events.map((e) => e.type)).toEqual(['step', 'file', 'text', 'source', 'step', 'end']);
    const file = got.events[1];
    expect(file?.type === 'file' && file.file.data?.byteLength).toBe(5000);
  });

  it('a file far larger than the text bound still fits: the reader holds one file at the cap beside the text', async () => {
    const b64 = Buffer.alloc(300_000, 2).toString('base64');
    for (const [type, body] of [
      ['text/event-stream', `event: file\ndata: {"name":"big.bin","data":"${b64}"}\n\ndata: {"delta":"ok"}\n\n`],
      ['application/x-ndjson', `{"type":"file","name":"big.bin","data":"${b64}"}\n{"delta":"ok"}\n`],
      ['application/json', `{\n "type": "file",\n "name": "big.bin",\n "data": "${b64}"\n}\n{"delta":"ok"}\n`],
    ] as const) {
      const got = await streamOf(body, type, 'a', { maxReplyChars: 100 });
      expect(got.text, type).toBe('ok');
      const file = got.events.find((e) => e.type === 'file');
      expect(file?.type === 'file' && file.file.data?.byteLength, type).toBe(300_000);
      await service?.close();
      await server?.close();
    }
  });

  it('maxFileBytes reaches the reader: a larger file is named with its size, without bytes', async () => {
    const b64 = Buffer.alloc(5000, 1).toString('base64');
    const body = `{"type":"file","name":"blob.bin","data":"${b64}"}\n{"delta":"ok"}\n`;
    const got = await streamOf(body, 'application/x-ndjson', 'b', { maxFileBytes: 4096 });
    expect(got.events).toEqual([
      { type: 'file', file: { name: 'blob.bin', size: 5000 } },
      { type: 'text', text: 'ok' },
      { type: 'end' },
    ]);
  });

  it('text past the cap still ends the reply as too_long', async () => {
    const body = 'event: status\ndata: {"text":"Working"}\n\ndata: {"delta":"abcdef"}\n\n';
    const got = await streamOf(body, 'text/event-stream', 'b', { maxReplyChars: 3 });
    expect(got.text).toBe('abc');
    expect(got.events.at(-1)).toEqual({ type: 'end', reason: 'too_long' });
  });
});
