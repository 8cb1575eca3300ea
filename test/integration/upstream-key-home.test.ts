import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { createChatService } from '../../src/upstream/index.js';

// "Same rule for every place a key is sent": CHAT_API_KEY goes only to CHAT_API_URL's origin. An
// upstream that answers with a redirect to another origin (another port here) gets the request
// failed, and the other origin sees nothing: no request, no Authorization header.

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

async function listen(handler: RequestListener): Promise<string> {
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

it('a redirect from the upstream to another origin is not followed with the key', async () => {
  const seen: (string | undefined)[] = [];
  const elsewhere = await listen((req, res) => {
    seen.push(req.headers.authorization);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"response":"from elsewhere"}');
  });
  const upstream = await listen((req, res) => {
    req.resume();
    res.writeHead(307, { location: `${elsewhere}${req.url ?? '/'}` });
    res.end();
  });
  for (const form of ['a', 'b'] as const) {
    const chat = createChatService({
      url: upstream,
      apiKey: 'sk-the-key-1234567890',
      form,
      requestTimeoutMs: 2000,
      streamIdleTimeoutMs: 2000,
      logger: silentLogger,
    });
    await expect(chat.send({ botId: 'bot', message: 'hi' })).rejects.toThrow();
    await expect(
      chat.stream({ botId: 'bot', message: 'hi' }).then(async (s) => {
        for await (const _ of s) void _;
      }),
    ).rejects.toThrow();
  }
  expect(seen).toEqual([]);
});
