import type { ServerResponse } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatError, type ChatService, type StreamEvent } from '../../src/core/chat-port.js';
import type { DecodedEvent } from '../../src/upstream/event-rules.js';
import { createDecoder } from '../../src/upstream/stream-reader.js';
import { collect, type TinyServer, testClient, tinyServer } from '../support/upstream.js';

// Fuzzing the upstream stream reader where the unit tests stop: the unit tests cut a handful of
// fixed bodies at every offset; here the bodies themselves are random (format, content type, the
// JSON key carrying the text, id spellings, line ends, keep-alives, how the stream ends, any
// Unicode text) AND cut at random offsets, first through the pure decoder, then over a real
// socket through the real client, including a connection cut at a random byte.

interface Body {
  contentType: string | undefined;
  bytes: Uint8Array;
  text: string;
  conversationId?: string;
  error?: string;
  /** The body says where it ends (an end event / done line), so a cut after it changes nothing. */
  explicitEnd: boolean;
}

const enc = new TextEncoder();

/** Any Unicode text without lone surrogates (which UTF-8 cannot carry). */
const anyText = fc.string({ unit: 'binary', maxLength: 24 });
/** Text for formats where the text is the raw payload: no CR (a line end in SSE) and not JSON-looking. */
const lineText = fc
  .string({
    unit: fc.constantFrom('a', 'é', '🚀', ' ', '世', '\n', 'x', '.', '{', '}', '"', ':', '[', ']'),
    maxLength: 20,
  })
  .filter((s) => !s.trimStart().startsWith('{') && s.trim() !== '[DONE]');

const textKey = fc.constantFrom(
  (t: string) => ({ delta: t }),
  (t: string) => ({ type: 'delta', delta: t }),
  (t: string) => ({ content: t }),
  (t: string) => ({ text: t }),
  (t: string) => ({ token: t }),
  (t: string) => ({ response: t }),
  (t: string) => ({ chunk: t }),
  (t: string) => ({ data: { content: t } }),
  (t: string) => ({ choices: [{ delta: { content: t } }] }),
);
const idKey = fc.constantFrom('conversationId', 'conversation_id', 'sessionId', 'session_id');
const idValue = fc.stringMatching(/^[a-z0-9_-]{1,12}$/);

/** SSE with JSON data: a start event with an id, deltas, comments/pings, and one of the ends. */
const sseJson: fc.Arbitrary<Body> = fc
  .record({
    pieces: fc.array(fc.tuple(anyText, textKey, fc.boolean()), { maxLength: 12 }),
    eol: fc.constantFrom('\n', '\r\n', '\r'),
    idKey,
    id: idValue,
    idUnderData: fc.boolean(),
    end: fc.constantFrom('[DONE]', 'event-done', 'json-done', 'type-complete', 'eof'),
    error: fc.option(fc.tuple(fc.nat(12), fc.stringMatching(/^[a-z ]{1,20}$/)), { nil: undefined }),
  })
  .map(({ pieces, eol, idKey, id, idUnderData, end, error }) => {
    const ev = (lines: string[]) => lines.join(eol) + eol + eol;
    const start = idUnderData ? { type: 'start', data: { [idKey]: id } } : { type: 'start', [idKey]: id };
    let out = ev([`data: ${JSON.stringify(start)}`]);
    let text = '';
    let errored: string | undefined;
    pieces.forEach(([t, key, noise], i) => {
      if (errored !== undefined) return;
      if (error !== undefined && error[0] === i) {
        out += ev(['event: error', `data: ${JSON.stringify({ error: error[1] })}`]);
        errored = error[1];
        return;
      }
      if (noise) out += `: keep-alive${eol}` + ev(['event: ping', 'data: not text']);
      out += ev([`data: ${JSON.stringify(key(t))}`]);
      text += t;
    });
    if (errored === undefined) {
      if (end === '[DONE]') out += ev(['data: [DONE]']);
      else if (end === 'event-done') out += ev(['event: done', 'data: {}']);
      else if (end === 'json-done')
        out += ev([`data: ${JSON.stringify({ done: true, text: 'whole reply repeated' })}`]);
      else if (end === 'type-complete') out += ev(['data: {"type":"complete"}']);
      // after the end, nothing counts
      if (end !== 'eof') out += ev(['data: {"delta":"AFTER THE END"}']);
    }
    const body: Body = {
      contentType: 'text/event-stream; charset=utf-8',
      bytes: enc.encode(out),
      text,
      conversationId: id,
      explicitEnd: end !== 'eof',
    };
    if (errored !== undefined) body.error = errored;
    return body;
  });

/** SSE with raw text data, multi-line data split into several data: lines. */
const sseText: fc.Arbitrary<Body> = fc
  .record({
    pieces: fc.array(lineText, { maxLength: 12 }),
    eol: fc.constantFrom('\n', '\r\n', '\r'),
    done: fc.boolean(),
  })
  .map(({ pieces, eol, done }) => {
    const ev = (lines: string[]) => lines.join(eol) + eol + eol;
    let out = '';
    for (const p of pieces) out += ev(p.split('\n').map((l) => `data: ${l}`));
    if (done) out += ev(['data: [DONE]']) + ev(['data: AFTER THE END']);
    return { contentType: 'text/event-stream', bytes: enc.encode(out), text: pieces.join(''), explicitEnd: done };
  });

/** One JSON object a line (NDJSON, JSONL, streamed JSON), blank lines, CRLF or LF. */
const jsonLines: fc.Arbitrary<Body> = fc
  .record({
    pieces: fc.array(fc.tuple(anyText, textKey, fc.boolean()), { maxLength: 12 }),
    type: fc.constantFrom('application/x-ndjson', 'application/jsonl', 'application/json; charset=utf-8'),
    eol: fc.constantFrom('\n', '\r\n'),
    idKey,
    id: idValue,
    done: fc.boolean(),
    lastNewline: fc.boolean(),
  })
  .map(({ pieces, type, eol, idKey, id, done, lastNewline }) => {
    const lines: string[] = [];
    let text = '';
    for (const [t, key, blank] of pieces) {
      if (blank) lines.push('');
      lines.push(JSON.stringify(key(t)));
      text += t;
    }
    if (done) lines.push(JSON.stringify({ done: true, [idKey]: id }), JSON.stringify({ delta: 'AFTER THE END' }));
    let out = lines.join(eol);
    if (lastNewline && out !== '') out += eol;
    const body: Body = { contentType: type, bytes: enc.encode(out), text, explicitEnd: done };
    if (done) body.conversationId = id;
    return body;
  });

/** Streamed application/json as pretty-printed objects spanning lines. */
const prettyJson: fc.Arbitrary<Body> = fc
  .array(fc.tuple(anyText, textKey), { minLength: 1, maxLength: 6 })
  .map((pieces) => ({
    contentType: 'application/json',
    bytes: enc.encode(pieces.map(([t, key]) => `${JSON.stringify(key(t), null, 2)}\n`).join('')),
    text: pieces.map(([t]) => t).join(''),
    explicitEnd: false,
  }));

/** Anything else: the bytes are the text. */
const plain: fc.Arbitrary<Body> = fc
  .record({
    text: fc.string({ unit: 'binary', maxLength: 60 }),
    type: fc.constantFrom('text/plain; charset=utf-8', undefined, 'application/octet-stream'),
  })
  .map(({ text, type }) => ({ contentType: type, bytes: enc.encode(text), text, explicitEnd: false }));

const anyBody = fc.oneof(sseJson, sseText, jsonLines, prettyJson, plain);

function cutsFor(bytes: Uint8Array) {
  return fc
    .uniqueArray(fc.integer({ min: 1, max: Math.max(1, bytes.length - 1) }), { maxLength: 16 })
    .map((c) => c.filter((x) => x < bytes.length).sort((a, b) => a - b));
}

function decodeCut(body: Body, cuts: number[]): DecodedEvent[] {
  const d = createDecoder(body.contentType);
  const out: DecodedEvent[] = [];
  let from = 0;
  for (const cut of [...cuts, body.bytes.length]) {
    if (cut > from) out.push(...d.push(body.bytes.subarray(from, cut)));
    from = cut;
  }
  out.push(...d.finish());
  return out;
}

const textOf = (events: readonly (DecodedEvent | StreamEvent)[]) =>
  events.map((e) => (e.type === 'text' ? e.text : '')).join('');
const lastConversationId = (events: readonly (DecodedEvent | StreamEvent)[]) =>
  events.reduce<string | undefined>(
    (id, e) => (e.type === 'ids' && e.conversationId !== undefined ? e.conversationId : id),
    undefined,
  );

describe('the stream decoder over random bodies and random chunkings', () => {
  it('yields exactly the text, the id and the end (or the error), whatever the format and the cuts', () => {
    fc.assert(
      fc.property(
        anyBody.chain((body) => fc.tuple(fc.constant(body), cutsFor(body.bytes))),
        ([body, cuts]) => {
          const events = decodeCut(body, cuts);
          expect(textOf(events)).toBe(body.text);
          expect(lastConversationId(events)).toBe(body.conversationId);
          const last = events.at(-1);
          if (body.error !== undefined) expect(last).toMatchObject({ type: 'error', message: body.error });
          else expect(last).toEqual({ type: 'end' });
          // one terminal event, always last
          expect(events.filter((e) => e.type === 'end' || e.type === 'error')).toHaveLength(1);
        },
      ),
      { numRuns: 1500, seed: 7001 },
    );
  });

  it('one byte at a time gives the same as the whole body', () => {
    fc.assert(
      fc.property(anyBody, (body) => {
        const whole = decodeCut(body, []);
        const bytewise = decodeCut(
          body,
          Array.from({ length: Math.max(0, body.bytes.length - 1) }, (_, i) => i + 1),
        );
        expect(textOf(bytewise)).toBe(textOf(whole));
        expect(bytewise.at(-1)).toEqual(whole.at(-1));
      }),
      { numRuns: 300, seed: 7002 },
    );
  });
});

// Over the wire: a node:http server writes the body in random pieces (with a turn of the event
// loop between them, so they arrive as separate chunks), optionally destroying the socket after a
// random number of bytes; the real client reads it.

interface Plan {
  body: Body;
  pieces: Uint8Array[];
  /** Destroy the socket after this many pieces instead of ending the body. */
  cutAfter?: number;
}

const plans: Plan[] = fc.sample(
  anyBody.chain((body) =>
    fc
      .tuple(fc.constant(body), cutsFor(body.bytes), fc.option(fc.nat(20), { nil: undefined, freq: 3 }))
      .map(([b, cuts, cut]) => {
        const pieces: Uint8Array[] = [];
        let from = 0;
        for (const c of [...cuts, b.bytes.length]) {
          if (c > from) pieces.push(b.bytes.subarray(from, c));
          from = c;
        }
        const plan: Plan = { body: b, pieces };
        if (cut !== undefined && pieces.length > 0) plan.cutAfter = cut % pieces.length;
        return plan;
      }),
  ),
  { numRuns: 150, seed: 7003 },
);

let server: TinyServer;
let service: ChatService;
beforeAll(async () => {
  server = await tinyServer(async (_req, res: ServerResponse, body) => {
    const plan = plans[Number(JSON.parse(body).message)] as Plan;
    res.writeHead(200, plan.body.contentType === undefined ? {} : { 'content-type': plan.body.contentType });
    res.flushHeaders();
    for (const [i, piece] of plan.pieces.entries()) {
      if (plan.cutAfter === i) {
        await new Promise((r) => setTimeout(r, 2));
        res.socket?.destroy();
        return;
      }
      res.write(piece);
      await new Promise((r) => setTimeout(r, 1));
    }
    res.end();
  });
  service = testClient(server.url, 'a').service;
});
afterAll(async () => {
  await service?.close();
  await server?.close();
});

describe('the real client over loopback, random bodies written in random pieces', () => {
  it('every plan: the whole text and a clean end, or the text so far and an interruption after a cut', async () => {
    let cuts = 0;
    for (const [i, plan] of plans.entries()) {
      const stream = await service.stream({ botId: 'b', message: String(i) });
      const got = await collect(stream);
      const { body } = plan;
      const label = `plan ${i} (${body.contentType ?? 'no type'}, ${plan.pieces.length} pieces, cut ${plan.cutAfter ?? '-'})`;
      if (plan.cutAfter !== undefined && got.error !== undefined) {
        // Cut before the end: the text so far and an interruption (or the error event, if it came first).
        cuts++;
        expect(got.error, label).toBeInstanceOf(ChatError);
        const err = got.error as ChatError;
        expect(body.text.startsWith(got.text), label).toBe(true);
        if (err.kind === 'stream_error') {
          expect(body.error, label).toBeDefined();
        } else {
          expect(err.kind, label).toBe('interrupted');
          expect(err.details.partial, label).toBe(got.text !== '');
        }
        continue;
      }
      // A cut after an explicit end changes nothing; without one, a cut must not look like an end.
      if (plan.cutAfter !== undefined) expect(body.explicitEnd || body.error !== undefined, label).toBe(true);
      if (body.error !== undefined) {
        expect(got.error, label).toBeInstanceOf(ChatError);
        expect((got.error as ChatError).kind, label).toBe('stream_error');
        expect(got.text, label).toBe(body.text);
        continue;
      }
      expect(got.error, label).toBeUndefined();
      expect(got.text, label).toBe(body.text);
      expect(got.events.at(-1), label).toEqual({ type: 'end' });
    }
    expect(cuts).toBeGreaterThan(5); // the sample exercises cuts
  }, 45_000);
});
