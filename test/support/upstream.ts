import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatService, ChatStream, StreamEvent } from '../../src/core/chat-port.js';
import type { DecodedEvent } from '../../src/upstream/event-rules.js';
import { type ChatForm, createChatService, type UpstreamClientOptions } from '../../src/upstream/index.js';
import { createDecoder } from '../../src/upstream/stream-reader.js';

// Shared by the upstream client tests (src/upstream/*.test.ts, test/resilience): kept under test/ so the build never ships it.

/** Adjacent text pieces merged: the form in which two chunkings of one stream must agree. */
export function normalize(events: readonly (DecodedEvent | StreamEvent)[]): (DecodedEvent | StreamEvent)[] {
  const out: (DecodedEvent | StreamEvent)[] = [];
  for (const ev of events) {
    const last = out[out.length - 1];
    if (ev.type === 'text' && last?.type === 'text') out[out.length - 1] = { type: 'text', text: last.text + ev.text };
    else out.push(ev.type === 'text' ? { ...ev } : ev);
  }
  return out;
}

/** Decode `bytes` cut at the given offsets (ascending, inside the buffer). */
export function decodeSplit(
  contentType: string | undefined,
  bytes: Uint8Array,
  cuts: readonly number[],
): DecodedEvent[] {
  const decoder = createDecoder(contentType);
  const events: DecodedEvent[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (cut > from) events.push(...decoder.push(bytes.subarray(from, cut)));
    from = cut;
  }
  events.push(...decoder.finish());
  return normalize(events) as DecodedEvent[];
}

export const decodeAll = (contentType: string | undefined, text: string | Uint8Array) =>
  decodeSplit(contentType, typeof text === 'string' ? new TextEncoder().encode(text) : text, []);

export interface TinyServer {
  url: string;
  /** Requests received, in order, with their bodies. */
  requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

/** A node:http server on loopback; the handler gets the request with its body read. */
export async function tinyServer(
  handler: (req: IncomingMessage, res: ServerResponse, body: string, n: number) => void | Promise<void>,
): Promise<TinyServer> {
  const requests: TinyServer['requests'] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    try {
      await handler(req, res, body, requests.length);
    } catch {
      res.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const TEST_KEY = 'sk-test-0123456789abcdef';

/** A client with instant, recorded retry waits. */
export function testClient(url: string, form: ChatForm, extra: Partial<UpstreamClientOptions> = {}) {
  const waits: number[] = [];
  const service: ChatService = createChatService({
    url,
    apiKey: TEST_KEY,
    form,
    requestTimeoutMs: 5_000,
    streamIdleTimeoutMs: 5_000,
    sleep: async (ms) => {
      waits.push(ms);
    },
    random: () => 0.5,
    ...extra,
  });
  return { service, waits };
}

/** Everything a stream yields, or the error it throws (with the events before it). */
export async function collect(stream: ChatStream): Promise<{ events: StreamEvent[]; text: string; error?: unknown }> {
  const events: StreamEvent[] = [];
  try {
    for await (const ev of stream) events.push(ev);
  } catch (error) {
    return { events, text: textOf(events), error };
  }
  return { events, text: textOf(events) };
}

const textOf = (events: StreamEvent[]) => events.map((e) => (e.type === 'text' ? e.text : '')).join('');

export const sleepMs = (ms: number) => new Promise((r) => setTimeout(r, ms));
