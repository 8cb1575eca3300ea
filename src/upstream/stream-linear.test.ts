import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type DecodedEvent, EventCollector, parseObject } from './event-rules.js';
import type { DecodeCounter } from './event-rules.js';
import { createDecoder } from './stream-reader.js';
import { decodeAll, decodeSplit, normalize } from '../../test/support/upstream.js';

// Hostile input for the stream decoders: the same events whatever the chunking, for bodies built
// from the characters that matter to each format; work (characters looked at, JSON.parse calls)
// in proportion to the body, counted rather than timed; and a bound on what a decoder holds back.

const enc = new TextEncoder();
const CONTENT_TYPES = ['text/event-stream', 'application/x-ndjson', 'application/json', 'text/plain'] as const;

/** Pieces that make sense to every format: JSON objects, SSE fields, line ends, stray brackets. */
const piece = fc.oneof(
  fc.constantFrom('{', '}', '[', ']', '"', '\\', ':', ',', ' ', '\n', '\r', '\r\n', '\u00a0', 'a', 'é', '🌍'),
  fc.constantFrom('data: ', 'event: done', 'event: ping', ': c', '[DONE]', '\n\n', '  '),
  fc.string({ maxLength: 6 }).map((t) => JSON.stringify({ delta: t })),
  fc.string({ maxLength: 6 }).map((t) => JSON.stringify({ data: { content: t, conversationId: 'c' } }, null, 2)),
  fc.constantFrom('{"done":true}', '{"error":"bad"}', '{"delta":"x"}{"delta":"y"}', '[{"delta":"z"}]'),
);
const body = fc.array(piece, { maxLength: 30 }).map((p) => enc.encode(p.join('')));

function cutsOf(bytes: Uint8Array) {
  return fc
    .uniqueArray(fc.integer({ min: 1, max: Math.max(1, bytes.length - 1) }), { maxLength: 20 })
    .map((c) => c.filter((x) => x < bytes.length).sort((a, b) => a - b));
}

describe('chunked decoding equals whole decoding, every format', () => {
  for (const type of CONTENT_TYPES) {
    it(type, () => {
      fc.assert(
        fc.property(
          body.chain((b) => fc.tuple(fc.constant(b), cutsOf(b))),
          ([bytes, cuts]) => {
            expect(decodeSplit(type, bytes, cuts)).toEqual(decodeSplit(type, bytes, []));
          },
        ),
        { numRuns: 400, seed: 1212 },
      );
    });
  }
});

/**
 * The streamed application/json reader as it was before it became linear: lines gathered until
 * their join parses, tried at every line closing with `}`. Quadratic, but the meaning to keep.
 * Plus the preamble rule: a first non-blank line that starts neither an object nor an array is
 * dropped when the lines after it start with an object that parses.
 */
function gatheringReference(text: string): DecodedEvent[] {
  const lines = text.split('\n');
  const k = lines.findIndex((l) => l.trim() !== '');
  const lead = k === -1 ? undefined : lines[k]?.trimStart()[0];
  if (lead !== undefined && lead !== '{' && lead !== '[') {
    const rest = gather(lines.slice(k + 1));
    if (rest.parsed) return rest.events;
  }
  return gather(lines).events;
}

function gather(lines: string[]): { events: DecodedEvent[]; parsed: boolean } {
  const events = new EventCollector();
  let gathered: string[] = [];
  let parsed = false;
  const line = (raw: string) => {
    const l = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (gathered.length === 0 && l.trim() === '') return;
    gathered.push(l);
    if (!l.trimEnd().endsWith('}')) return;
    const obj = parseObject(gathered.join('\n'));
    if (obj) {
      gathered = [];
      parsed = true;
      events.json(obj);
    }
  };
  for (const l of lines) line(l);
  if (gathered.length > 0) events.text(gathered.join('\n'));
  events.end();
  return { events: normalize(events.take()) as DecodedEvent[], parsed };
}

describe('streamed application/json keeps its meaning', () => {
  it('gives what the gathering reader gave, for any body', () => {
    fc.assert(
      fc.property(body, (bytes) => {
        const text = new TextDecoder().decode(bytes);
        expect(decodeAll('application/json', bytes)).toEqual(gatheringReference(text));
      }),
      { numRuns: 2000, seed: 3434 },
    );
  });

  it('one object a line, pretty-printed objects, and text that is no object', () => {
    const pretty = `${JSON.stringify({ data: { response: 'a}\n', conversationId: 'c' } }, null, 2)}\r\n\r\n`;
    expect(decodeAll('application/json', `{"delta":"x"}\n${pretty}{"text":"y"}`)).toEqual([
      { type: 'text', text: 'x' },
      { type: 'ids', conversationId: 'c' },
      { type: 'text', text: 'a}\ny' },
      { type: 'end' },
    ]);
    expect(decodeAll('application/json', '{"delta":"x"}\n  [1, 2]\r\n{"delta":"y"}\r')).toEqual([
      { type: 'text', text: 'x  [1, 2]\n{"delta":"y"}' },
      { type: 'end' },
    ]);
  });

  it('passes text on as it arrives once the body is no longer objects', () => {
    const d = createDecoder('application/json');
    expect(d.push(enc.encode('{"delta":"a"}\n'))).toEqual([{ type: 'text', text: 'a' }]);
    expect(d.push(enc.encode('plain '))).toEqual([{ type: 'text', text: 'plain ' }]);
    expect(d.push(enc.encode('words\r'))).toEqual([{ type: 'text', text: 'words' }]);
    expect(d.push(enc.encode('\nmore'))).toEqual([{ type: 'text', text: '\nmore' }]);
  });
});

/** `count` pieces of the body, fed one after the other; returns the work done. */
function work(type: string, pieces: string[]): { counter: DecodeCounter; events: DecodedEvent[]; chars: number } {
  const counter: DecodeCounter = { scanned: 0, parses: 0 };
  const d = createDecoder(type, { counter });
  const events: DecodedEvent[] = [];
  for (const p of pieces) events.push(...d.push(enc.encode(p)));
  events.push(...d.finish());
  return { counter, events: normalize(events) as DecodedEvent[], chars: pieces.reduce((n, p) => n + p.length, 0) };
}

/** `text` cut into pieces of `size` characters (ASCII here, so characters are bytes). */
const chop = (text: string, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

const N = 20_000;

describe('work in proportion to the input (counted, not timed)', () => {
  it('application/json, one object a line in 20,000 chunks: each character once, one parse a line', () => {
    const lines = Array.from({ length: N }, (_, i) => `{"delta":"${i % 10}"}\n`);
    const { counter, events, chars } = work('application/json', lines);
    expect(counter.scanned).toBe(chars);
    expect(counter.parses).toBe(N);
    expect(events.at(-1)).toEqual({ type: 'end' });
  });

  it('application/json, one pretty-printed document of 20,000 lines closing with } in 4-byte chunks', () => {
    const items = Array.from({ length: N }, (_, i) => ({ n: i }));
    const doc = JSON.stringify({ data: { items, response: 'whole' } }, null, 1);
    const pieces = chop(doc, 4);
    const { counter, events, chars } = work('application/json', pieces);
    expect(counter.scanned).toBe(chars);
    expect(counter.parses).toBe(1);
    expect(events).toEqual([{ type: 'text', text: 'whole' }, { type: 'end' }]);
  });

  it('application/json, a JSON array with an object a line: parsed never, text at once', () => {
    const doc = `[\n${Array.from({ length: N }, () => '{"delta":"x"}').join('\n,')}\n]`;
    const { counter, events, chars } = work('application/json', chop(doc, 7));
    expect(counter.scanned).toBe(chars);
    expect(counter.parses).toBe(0);
    expect(events).toEqual([{ type: 'text', text: doc }, { type: 'end' }]);
  });

  it.each(['application/json', 'application/x-ndjson'])(
    '%s behind a preamble, 20,000 lines in 5-byte chunks: each character once, one parse a line',
    (type) => {
      const doc = `)]}'\n${Array.from({ length: N }, (_, i) => `{"delta":"${i % 10}"}`).join('\n')}\n`;
      const { counter, events, chars } = work(type, chop(doc, 5));
      expect(counter.scanned).toBe(chars);
      expect(counter.parses).toBeLessThanOrEqual(N + 1);
      const text = events.map((e) => (e.type === 'text' ? e.text : '')).join('');
      expect(text).toBe(Array.from({ length: N }, (_, i) => i % 10).join(''));
    },
  );

  it('application/json, a preamble that never ends past maxBuffered ends the stream as too_long', () => {
    const d = createDecoder('application/json', { maxBuffered: 1000 });
    const events: DecodedEvent[] = [...d.push(enc.encode(")]}'\n"))];
    for (let i = 0; i < 100 && events.length === 0; i++) events.push(...d.push(enc.encode('\n'.repeat(100))));
    expect(events).toEqual([{ type: 'end', reason: 'too_long' }]);
  });

  it('application/json, an object that never closes on any line: no parse until it does', () => {
    const doc = `{"a":[${Array.from({ length: N }, () => '{}').join(',\n')}\n`;
    const { counter, chars } = work('application/json', chop(doc, 3));
    expect(counter.scanned).toBe(chars);
    expect(counter.parses).toBe(0);
  });

  it.each([
    ['text/event-stream', (i: number) => `data: {"delta":"${i % 10}"}\n\n`],
    ['application/x-ndjson', (i: number) => `{"delta":"${i % 10}"}\n`],
    ['text/plain', (i: number) => `${i % 10}`],
  ])('%s in 20,000 chunks: each character once, one parse an event', (type, line) => {
    const { counter, events, chars } = work(
      type,
      Array.from({ length: N }, (_, i) => line(i)),
    );
    expect(counter.scanned).toBe(chars);
    expect(counter.parses).toBeLessThanOrEqual(N);
    const text = events.map((e) => (e.type === 'text' ? e.text : '')).join('');
    expect(text).toHaveLength(N);
  });

  it.each(['text/event-stream', 'application/x-ndjson', 'application/json'])(
    '%s: one long line in 1-byte chunks is looked at once',
    (type) => {
      const long = `${type === 'text/event-stream' ? 'data: ' : ''}{"delta":"${'x'.repeat(N)}"}\n\n`;
      const { counter, events, chars } = work(type, chop(long, 1));
      expect(counter.scanned).toBe(chars);
      expect(counter.parses).toBe(1);
      expect(events).toEqual([{ type: 'text', text: 'x'.repeat(N) }, { type: 'end' }]);
    },
  );
});

describe('what a decoder holds back is bounded', () => {
  it.each([
    ['text/event-stream', 'data: '],
    ['application/x-ndjson', '{"delta":"'],
    ['application/json', '{"delta":"'],
  ])('%s: a line that never ends past maxBuffered ends the stream as too_long', (type, start) => {
    const d = createDecoder(type, { maxBuffered: 1000 });
    const events: DecodedEvent[] = [...d.push(enc.encode(start))];
    for (let i = 0; i < 100 && events.length === 0; i++) events.push(...d.push(enc.encode('y'.repeat(100))));
    expect(events).toEqual([{ type: 'end', reason: 'too_long' }]);
    // Nothing after that counts.
    expect(d.push(enc.encode('"}\n\n'))).toEqual([]);
    expect(d.finish()).toEqual([]);
  });

  it('events within the bound are not affected by it', () => {
    const d = createDecoder('text/event-stream', { maxBuffered: 100 });
    const out: DecodedEvent[] = [];
    for (let i = 0; i < 1000; i++) out.push(...d.push(enc.encode(`data: {"delta":"${'z'.repeat(50)}"}\n\n`)));
    out.push(...d.finish());
    expect(normalize(out)).toEqual([{ type: 'text', text: 'z'.repeat(50_000) }, { type: 'end' }]);
  });
});
