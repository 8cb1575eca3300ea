import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as chat } from './chat.js';
import { run as conversations } from './conversations.js';

// CHAT_API_URL pointing at something that is not the chat service but answers 200: a web site
// (HTML), or another JSON API. `chat` and `conversations` say so and exit 1, instead of printing
// the page as the assistant's reply or "no conversations".

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith('/json')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', service: 'something else' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html><body><h1>Welcome to our site</h1></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function sink() {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

const env = (base: string, form: string) => ({
  CHAT_API_URL: base,
  CHAT_API_KEY: 'k',
  CHAT_BOT_ID: 'demo-bot',
  CHAT_API_FORM: form,
  DATABASE_PATH: '/nonexistent/bridge.db',
});

describe.each(['a', 'b'])('an address that is not the chat API (Form %s)', (form) => {
  it.each(['on', 'off'])('chat (streaming %s): says so on stderr and exits 1, printing no HTML', async (streaming) => {
    const out = sink();
    const err = sink();
    const code = await chat([], {
      stdin: Readable.from(['hello\n']),
      stdout: out.stream,
      stderr: err.stream,
      env: { ...env(url, form), CHAT_STREAMING: streaming },
    });
    expect(code).toBe(1);
    expect(out.text()).toBe('');
    expect(err.text()).toMatch(
      /^error: [AB][12] \S+: answered 200 with an HTML page: this address is not the chat API \(check CHAT_API_URL\)\n$/,
    );
  });

  it.each([
    ['HTML', ''],
    ['JSON of another shape', '/json'],
  ])('conversations list, %s: says so and exits 1', async (_what, path) => {
    const out = sink();
    const err = sink();
    const code = await conversations(['list'], { stdout: out.stream, stderr: err.stream, env: env(url + path, form) });
    expect(code).toBe(1);
    expect(out.text()).not.toMatch(/no conversations/i);
    expect(err.text()).toMatch(/this address is not the chat API \(check CHAT_API_URL\)/);
  });

  it('conversations show, JSON of another shape: says so and exits 1', async () => {
    const out = sink();
    const err = sink();
    const code = await conversations(['show', 'c1'], {
      stdout: out.stream,
      stderr: err.stream,
      env: env(`${url}/json`, form),
    });
    expect(code).toBe(1);
    expect(err.text()).toMatch(/[AB]3 history: the answer has no "messages" list: this address is not the chat API/);
  });
});
