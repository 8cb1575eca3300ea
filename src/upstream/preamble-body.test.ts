import { afterEach, describe, expect, it } from 'vitest';
import type { ChatService } from '../core/chat-port.js';
import { parseBody } from './stream-reader.js';
import { type TinyServer, testClient, tinyServer } from '../../test/support/upstream.js';

// Whole (not streamed) JSON bodies behind a preamble line, over loopback: the JSON is read, the
// preamble never becomes reply text.

let server: TinyServer | undefined;
let service: ChatService | undefined;
afterEach(async () => {
  await service?.close();
  await server?.close();
  service = undefined;
  server = undefined;
});

async function setup(handler: Parameters<typeof tinyServer>[0], form: 'a' | 'b') {
  server = await tinyServer(handler);
  service = testClient(server.url, form, {}).service;
}

const req = { botId: 'bot-1', message: 'hi' };

describe('whole JSON bodies behind a preamble', () => {
  it.each(['a', 'b'] as const)(
    "Form %s send: the JSON after a `)]}'` line is the reply, never the raw body",
    async (form) => {
      const body = {
        success: true,
        data: { response: 'Hello', conversationId: 'c1' },
        response: 'Hello',
        session_id: 's1',
      };
      await setup((_q, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(`)]}'\n${JSON.stringify(body)}`);
      }, form);
      const got = await service!.send({ ...req, ...(form === 'b' ? { conversationId: 's1' } : {}) });
      expect(got.text).toBe('Hello');
    },
  );

  it('a text body is still text, and JSON is only looked for behind a JSON content type', () => {
    expect(parseBody(')]}\'\n{"a":1}', 'application/json')).toEqual({ a: 1 });
    expect(parseBody(')]}\'\n{"a":1}', 'text/plain')).toBe(')]}\'\n{"a":1}');
    expect(parseBody('Hello\nthere', 'application/json')).toBe('Hello\nthere');
    expect(parseBody('[1]\n{"a":1}', 'application/json')).toBe('[1]\n{"a":1}');
  });
});
