import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from './index.js';
import { auth, KEY, post } from '../../test/support/emulator.js';
import type { EmulatorStreamFormat } from './types.js';

let emu: Emulator;
beforeEach(async () => {
  emu = await startEmulator({ apiKey: KEY, chunkDelayMs: 0 });
});
afterEach(async () => {
  await emu.close();
});

/** Streams and keeps each received network chunk apart. */
async function rawStream(path: string, body: unknown) {
  const res = await request(`${emu.url}${path}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const chunks: Buffer[] = [];
  for await (const c of res.body) chunks.push(c as Buffer);
  return { status: res.statusCode, headers: res.headers, chunks, text: Buffer.concat(chunks).toString('utf8') };
}

const A2 = '/api/v1/chat/demo-bot/stream';
const B2 = '/v1/chat/stream';
// "You said: hi [chunks 2]" is 23 characters: pieces of 11 and 12.
const MSG = 'hi [chunks 2]';

function lastAssistantId(id: string): string {
  const msgs = emu.conversation(id)?.messages ?? [];
  return msgs[msgs.length - 1]?.id ?? 'none';
}

describe('stream wire formats, Form A', () => {
  it('sse-json: start, deltas, done with ids; X-Conversation-Id header', async () => {
    const r = await rawStream(A2, { message: MSG });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const id = r.headers['x-conversation-id'] as string;
    expect(id).toMatch(/^conv_/);
    expect(r.text).toBe(
      `data: {"type":"start","conversationId":"${id}"}\n\n` +
        'data: {"type":"delta","delta":"You said: h"}\n\n' +
        'data: {"type":"delta","delta":"i [chunks 2]"}\n\n' +
        `data: {"type":"done","conversationId":"${id}","messageId":"${lastAssistantId(id)}"}\n\n`,
    );
    expect(emu.conversation(id)?.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('sse-text: data lines per text line, then [DONE]', async () => {
    emu.setOptions({ streamFormat: 'sse-text' });
    const r = await rawStream(A2, { message: 'a\nb [chunks 1]' });
    expect(r.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(r.text).toBe('data: You said: a\ndata: b [chunks 1]\n\ndata: [DONE]\n\n');
  });

  it('ndjson: delta lines then a done line with snake_case ids', async () => {
    emu.setOptions({ streamFormat: 'ndjson' });
    const r = await rawStream(A2, { message: MSG });
    expect(r.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    const id = r.headers['x-conversation-id'] as string;
    expect(r.text).toBe(
      '{"delta":"You said: h"}\n{"delta":"i [chunks 2]"}\n' +
        `{"done":true,"conversation_id":"${id}","message_id":"${lastAssistantId(id)}"}\n`,
    );
  });

  it('plain: the bytes of the reply, split at byte boundaries (multi-byte characters straddle chunks)', async () => {
    emu.setOptions({ streamFormat: 'plain', chunkDelayMs: 5 });
    const message = 'aé🚀é🚀é🚀';
    const r = await rawStream(A2, { message });
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.text).toBe(`You said: ${message}`);
    const bytes = Buffer.byteLength(r.text);
    expect(r.chunks.length).toBe(Math.ceil(bytes / 8));
    // At least one network chunk is not valid UTF-8 on its own.
    expect(r.chunks.some((c) => c.toString('utf8').includes('\uFFFD'))).toBe(true);
  });

  it('continues a conversation given in the body and records metadata', async () => {
    const first = await rawStream(A2, { message: 'one' });
    const id = first.headers['x-conversation-id'] as string;
    const meta = { source: 'discord', userId: 'U1' };
    const second = await rawStream(A2, { message: 'two', conversationId: id, metadata: meta });
    expect(second.headers['x-conversation-id']).toBe(id);
    expect(emu.conversation(id)?.messages).toHaveLength(4);
    expect(emu.requests[1]).toMatchObject({
      endpoint: 'stream',
      conversationId: id,
      metadata: meta,
      message: 'two',
      status: 200,
    });
    const unknown = await post(emu.url, A2, { message: 'x', conversationId: 'conv_gone' });
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toContain('application/json');
  });

  it.each([
    ['header', true, false],
    ['event', false, true],
    ['both', true, true],
    ['none', false, false],
  ] as const)('streamIds %s', async (streamIds, inHeader, inEvent) => {
    emu.setOptions({ streamIds });
    const r = await rawStream(A2, { message: 'x' });
    expect(r.headers['x-conversation-id'] !== undefined).toBe(inHeader);
    expect(r.text.includes('"conversationId"')).toBe(inEvent);
    expect(r.text).toContain('"type":"done"');
  });
});

describe('stream wire formats, Form B', () => {
  const body = { bot_id: 'demo-bot', message: MSG, session_id: 'sess-1' };
  it('sse-json carries session_id and message_id', async () => {
    const r = await rawStream(B2, body);
    expect(r.headers['x-session-id']).toBe('sess-1');
    expect(r.text).toBe(
      'data: {"type":"start","session_id":"sess-1"}\n\n' +
        'data: {"type":"delta","delta":"You said: h"}\n\n' +
        'data: {"type":"delta","delta":"i [chunks 2]"}\n\n' +
        `data: {"type":"done","session_id":"sess-1","message_id":"${lastAssistantId('sess-1')}"}\n\n`,
    );
  });

  it('ndjson ends with session_id and message_id', async () => {
    emu.setOptions({ streamFormat: 'ndjson' });
    const r = await rawStream(B2, body);
    expect(r.text.split('\n').at(-2)).toBe(
      `{"done":true,"session_id":"sess-1","message_id":"${lastAssistantId('sess-1')}"}`,
    );
  });

  it('generates a session id for a stream without one', async () => {
    const r = await rawStream(B2, { bot_id: 'demo-bot', message: 'x' });
    const sid = r.headers['x-session-id'] as string;
    expect(r.text).toContain(`"session_id":"${sid}"`);
    expect(emu.conversation(sid)?.messages).toHaveLength(2);
  });

  it('validates like B1', async () => {
    const r = await post(emu.url, B2, { bot_id: 'zzz', message: 'x' });
    expect(r.status).toBe(400);
    expect(r.json().error.code).toBe('INVALID_BOT_ID');
  });
});

describe('stream text equals the one-response text', () => {
  it.each(['sse-json', 'sse-text', 'ndjson', 'plain'] as EmulatorStreamFormat[])(
    '%s, long reply with emoji and code fences',
    async (format) => {
      emu.setOptions({ streamFormat: format });
      const message = 'Ünïcode 🚀 [long 3000]';
      const one = (await post(emu.url, '/api/v1/chat/demo-bot/message', { message })).json().data.response;
      const r = await rawStream(A2, { message });
      let text: string;
      if (format === 'plain') text = r.text;
      else if (format === 'ndjson')
        text = r.text
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).delta ?? '')
          .join('');
      else {
        const events = r.text.split('\n\n').filter((e) => e !== '');
        text = events
          .map((e) =>
            e
              .split('\n')
              .map((l) => l.slice('data: '.length))
              .join('\n'),
          )
          .filter((d) => d !== '[DONE]')
          .map((d) => (format === 'sse-json' ? (JSON.parse(d).delta ?? '') : d))
          .join('');
      }
      expect(text).toBe(one);
      expect(text).toHaveLength(3000);
    },
  );
});

describe('pacing', () => {
  it('splitWrites sends each frame in two network writes', async () => {
    emu.setOptions({ splitWrites: true, chunkDelayMs: 5 });
    const r = await rawStream(A2, { message: 'ü [chunks 1]' });
    expect(r.chunks.length).toBeGreaterThanOrEqual(4);
    expect(r.text).toContain('"type":"done"');
  });

  it('[delay MS] spaces the chunks out', async () => {
    const t0 = Date.now();
    await rawStream(A2, { message: 'x [chunks 4] [delay 50]' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
  });
});
