import { describe, expect, it } from 'vitest';
import { responsesWriter } from '../emulator/form-responses.js';
import { normalize } from '../../test/support/upstream.js';
import type { DecodedEvent } from './event-rules.js';
import { ResponsesDecoder } from './responses-decoder.js';

// The Responses stream decoder: the same events whatever the chunking and line ends; bounded.

const stream = (text: string) => {
  const w = responsesWriter('resp_abc123', 'm', 0, text);
  return w.start({}) + w.delta(text.slice(0, 5)) + w.delta(text.slice(5)) + w.done({});
};

function decode(bytes: Uint8Array, cuts: number[], maxBuffered?: number): DecodedEvent[] {
  const d = new ResponsesDecoder(maxBuffered !== undefined ? { maxBuffered } : {});
  const out: DecodedEvent[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (cut > from) out.push(...d.push(bytes.subarray(from, cut)));
    from = cut;
  }
  out.push(...d.finish());
  return normalize(out) as DecodedEvent[];
}

describe('ResponsesDecoder', () => {
  const text = 'Hello, wörld ✨ — fine.';
  const expected = [
    { type: 'ids', conversationId: 'resp_abc123', messageId: 'resp_abc123' },
    { type: 'text', text },
    { type: 'end' },
  ];

  it('gives the text once (never the .done repeats), the id once, then the end', () => {
    expect(decode(new TextEncoder().encode(stream(text)), [])).toEqual(expected);
  });

  it('the same events cut at every byte, with CRLF line ends', () => {
    const bytes = new TextEncoder().encode(stream(text).replace(/\n/g, '\r\n'));
    const every = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
    expect(decode(bytes, every)).toEqual(expected);
  });

  it('an event that never ends is cut at the bound as too_long', () => {
    const bytes = new TextEncoder().encode(`data: {"type":"response.output_text.delta","delta":"${'x'.repeat(5000)}`);
    expect(decode(bytes, [], 1000).at(-1)).toEqual({ type: 'end', reason: 'too_long' });
  });
});
