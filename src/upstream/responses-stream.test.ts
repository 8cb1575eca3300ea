import { describe, expect, it } from 'vitest';
import { responsesWriter } from '../emulator/form-responses.js';
import { normalize } from '../../test/support/upstream.js';
import type { DecodedEvent, DecoderOptions } from './event-rules.js';
import { SseDecoder } from './stream-reader.js';

// A Responses stream as the responses form reads it: the shared SSE decoder and agent-event rules,
// with the response's id as the conversation. The same events whatever the chunking and line
// ends; bounded; the response id names a conversation only for the responses form.

const stream = (text: string) => {
  const w = responsesWriter('resp_abc123', 'm', 0, text);
  return w.start({}) + w.delta(text.slice(0, 5)) + w.delta(text.slice(5)) + w.done({});
};

function decode(bytes: Uint8Array, cuts: number[], opts: DecoderOptions = { responseIds: true }): DecodedEvent[] {
  const d = new SseDecoder(opts);
  const out: DecodedEvent[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (cut > from) out.push(...d.push(bytes.subarray(from, cut)));
    from = cut;
  }
  out.push(...d.finish());
  return normalize(out) as DecodedEvent[];
}

const data = (obj: Record<string, unknown>) => `event: ${String(obj.type)}\ndata: ${JSON.stringify(obj)}\n\n`;
const bytesOf = (s: string) => new TextEncoder().encode(s);

describe('a Responses stream (the responses form)', () => {
  const text = 'Hello, wörld ✨ — fine.';
  const expected = [
    { type: 'ids', conversationId: 'resp_abc123', messageId: 'resp_abc123' },
    { type: 'text', text },
    { type: 'end' },
  ];

  it('gives the text once (never the .done repeats), the id once, then the end', () => {
    expect(decode(bytesOf(stream(text)), [])).toEqual(expected);
  });

  it('the same events cut at every byte, with CRLF line ends', () => {
    const bytes = bytesOf(stream(text).replace(/\n/g, '\r\n'));
    const every = Array.from({ length: bytes.length - 1 }, (_, i) => i + 1);
    expect(decode(bytes, every)).toEqual(expected);
  });

  it('an event that never ends is cut at the bound as too_long', () => {
    const bytes = bytesOf(`data: {"type":"response.output_text.delta","delta":"${'x'.repeat(5000)}`);
    expect(decode(bytes, [], { responseIds: true, maxBuffered: 1000 }).at(-1)).toEqual({
      type: 'end',
      reason: 'too_long',
    });
  });

  it('outside the responses form, a Responses event names no conversation', () => {
    expect(decode(bytesOf(stream(text)), [], {})).toEqual([{ type: 'text', text }, { type: 'end' }]);
  });

  it('tool calls are steps and citations sources; reasoning and arguments are never text', () => {
    const body =
      data({ type: 'response.created', response: { id: 'resp_1', output: [] } }) +
      data({ type: 'response.reasoning_summary_text.delta', delta: 'REASONING-LEAK' }) +
      data({
        type: 'response.output_item.added',
        item: { type: 'web_search_call', id: 'ws_1', status: 'in_progress' },
      }) +
      data({ type: 'response.output_item.done', item: { type: 'web_search_call', id: 'ws_1', status: 'completed' } }) +
      data({
        type: 'response.output_item.added',
        item: { type: 'function_call', call_id: 'c1', name: 'get_weather' },
      }) +
      data({ type: 'response.function_call_arguments.delta', delta: '{"city":"ARGS-LEAK"}' }) +
      data({ type: 'response.output_text.delta', delta: 'Sunny.' }) +
      data({
        type: 'response.output_text.annotation.added',
        annotation: { type: 'url_citation', url: 'https://example.com/w', title: 'Weather' },
      }) +
      data({ type: 'response.completed', response: { id: 'resp_1', output: [] } });
    expect(decode(bytesOf(body), [])).toEqual([
      { type: 'ids', conversationId: 'resp_1', messageId: 'resp_1' },
      { type: 'step', step: { id: 'ws_1', title: 'Searching the web', state: 'running' } },
      { type: 'step', step: { id: 'ws_1', title: 'Searching the web', state: 'done' } },
      { type: 'step', step: { id: 'c1', title: 'get_weather', state: 'running' } },
      { type: 'text', text: 'Sunny.' },
      { type: 'source', source: { url: 'https://example.com/w', title: 'Weather' } },
      { type: 'step', step: { id: 'c1', title: 'get_weather', state: 'done' } },
      { type: 'end' },
    ]);
  });

  it('an `error` event and a failed response are errors with their codes', () => {
    const w = responsesWriter('resp_e', 'm', 0, '');
    expect(decode(bytesOf(w.start({}) + w.error('boom', 'server_error')), [])).toEqual([
      { type: 'ids', conversationId: 'resp_e', messageId: 'resp_e' },
      { type: 'error', message: 'boom', code: 'server_error' },
    ]);
    const failed = data({
      type: 'response.failed',
      response: { id: 'resp_f', error: { code: 'rate_limit_exceeded', message: 'slow down' } },
    });
    expect(decode(bytesOf(failed), [])).toEqual([{ type: 'error', message: 'slow down', code: 'rate_limit_exceeded' }]);
  });
});
