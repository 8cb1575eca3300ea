import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AgentFile } from '../core/chat-port.js';
import {
  AGENT_FIXTURES,
  ANSWER,
  CONTENT_TYPES,
  encodeFrames,
  type Frame,
  type WireFormat,
} from '../../test/support/agent-streams.js';
import { decodeAll, decodeSplit } from '../../test/support/upstream.js';
import type { DecodedEvent } from './event-rules.js';
import { createDecoder } from './stream-reader.js';

// The upstream reader and an agent's stream: for each protocol, in each stream format, split at
// any byte, the answer text is exactly the answer (no reasoning, tool arguments or tool output),
// the tool calls are steps running → done and the citations sources, and the reply ends.

const enc = new TextEncoder();
const SSE = 'text/event-stream';
const NDJSON = 'application/x-ndjson';
const FORMATS: WireFormat[] = ['sse', 'ndjson', 'json'];

/** What a user could see of a reply: its text, its agent events in order, and how it ended. */
function seen(events: readonly DecodedEvent[]) {
  const text = events.map((e) => (e.type === 'text' ? e.text : '')).join('');
  const steps = events.flatMap((e) => (e.type === 'step' ? [e.step] : []));
  const sources = events.flatMap((e) => (e.type === 'source' ? [e.source] : []));
  const files = events.flatMap((e) => (e.type === 'file' ? [e.file] : []));
  return { text, steps, sources, files, last: events[events.length - 1]?.type };
}

function cutsOf(bytes: Uint8Array) {
  return fc
    .uniqueArray(fc.integer({ min: 1, max: Math.max(1, bytes.length - 1) }), { maxLength: 40 })
    .map((c) => c.filter((x) => x < bytes.length).sort((a, b) => a - b));
}

describe('an agent reply, in every protocol and stream format, split anywhere', () => {
  for (const fixture of AGENT_FIXTURES) {
    for (const format of FORMATS) {
      it(`${fixture.protocol} as ${format}`, () => {
        const bytes = enc.encode(encodeFrames(fixture.frames, format));
        const want = {
          text: ANSWER,
          steps: fixture.steps,
          sources: fixture.sources,
          files: fixture.files,
          last: 'end',
        };
        expect(seen(decodeSplit(CONTENT_TYPES[format], bytes, []))).toEqual(want);
        fc.assert(
          fc.property(cutsOf(bytes), (cuts) => {
            expect(seen(decodeSplit(CONTENT_TYPES[format], bytes, cuts))).toEqual(want);
          }),
          { numRuns: 60, seed: 36 },
        );
      });
    }
  }
});

const sse = (frames: Frame[]) => encodeFrames(frames, 'sse');
const data = (obj: Record<string, unknown>): Frame => ({ data: obj });

describe("the leaks of issue 36's table are gone", () => {
  it('OpenAI Responses: reasoning summaries and function arguments are not text, the citation is a source', () => {
    const body = sse([
      data({ type: 'response.reasoning_summary_text.delta', delta: 'REASONING-LEAK ' }),
      data({ type: 'response.output_item.added', item: { type: 'function_call', call_id: 'c', name: 'f' } }),
      data({ type: 'response.function_call_arguments.delta', delta: '{"city":"ARGS-LEAK"}' }),
      data({ type: 'response.output_text.delta', delta: 'Hello world.' }),
      data({ type: 'response.output_text.annotation.added', annotation: { type: 'url_citation', url: 'https://s/' } }),
    ]);
    const s = seen(decodeAll(SSE, body));
    expect(s.text).toBe('Hello world.');
    expect(s.sources).toEqual([{ url: 'https://s/' }]);
    expect(s.steps).toEqual([
      { id: 'c', title: 'f', state: 'running' },
      { id: 'c', title: 'f', state: 'done' },
    ]);
  });

  it('the Vercel AI SDK: reasoning and tool input deltas are not text', () => {
    const body = sse([
      data({ type: 'reasoning-delta', id: 'r', delta: 'REASONING-LEAK ' }),
      data({ type: 'tool-input-start', toolCallId: 't', toolName: 'search' }),
      data({ type: 'tool-input-delta', toolCallId: 't', inputTextDelta: 'ARGS-LEAK' }),
      data({ type: 'tool-output-available', toolCallId: 't', output: 'OUTPUT-LEAK' }),
      data({ type: 'text-delta', id: 'x', delta: 'Hello world.' }),
    ]);
    expect(seen(decodeAll(SSE, body)).text).toBe('Hello world.');
  });

  it('AG-UI: tool arguments are not text', () => {
    const body = sse([
      data({ type: 'STEP_STARTED', stepName: 'plan' }),
      data({ type: 'TOOL_CALL_START', toolCallId: 't', toolCallName: 'search' }),
      data({ type: 'TOOL_CALL_ARGS', toolCallId: 't', delta: '{"q":"ARGS-LEAK"}' }),
      data({ type: 'TOOL_CALL_END', toolCallId: 't' }),
      data({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'Hello world.' }),
    ]);
    expect(seen(decodeAll(SSE, body)).text).toBe('Hello world.');
  });

  it("Chat Completions: a tool's answer streamed as a `tool` delta ends its step and is not text", () => {
    const chunk = (delta: Record<string, unknown>) => data({ object: 'chat.completion.chunk', choices: [{ delta }] });
    const body = sse([
      chunk({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'lookup', arguments: 'ARGS-LEAK' } }] }),
      chunk({ role: 'tool', tool_call_id: 'c1', content: 'OUTPUT-LEAK' }),
      chunk({ content: 'Hello world.' }),
    ]);
    const s = seen(decodeAll(SSE, body));
    expect(s.text).toBe('Hello world.');
    expect(s.steps.map((x) => x.state)).toEqual(['running', 'done']);
  });

  it('Anthropic: the tool is a step while it runs', () => {
    const body = sse([
      data({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'tu', name: 'lookup' } }),
      data({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 'ARGS-LEAK' } }),
    ]);
    const events = createDecoder(SSE).push(enc.encode(body));
    expect(events).toEqual([{ type: 'step', step: { id: 'tu', title: 'lookup', state: 'running' } }]);
  });
});

describe('ids', () => {
  it("the reply's message id is its text message's, never a reasoning or tool message's", () => {
    const body = sse([
      data({ type: 'REASONING_MESSAGE_START', messageId: 'r1' }),
      data({ type: 'TOOL_CALL_RESULT', messageId: 'tool-1', toolCallId: 't', content: 'x' }),
      data({ type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' }),
      data({ type: 'tool-output-available', toolCallId: 't', messageId: 'tool-2' }),
      data({ type: 'start', messageId: 'm2' }),
    ]);
    expect(decodeAll(SSE, body).filter((e) => e.type === 'ids')).toEqual([
      { type: 'ids', messageId: 'm1' },
      { type: 'ids', messageId: 'm2' },
    ]);
  });
});

describe('errors and ends of each protocol', () => {
  it('Responses failed, AG-UI RUN_ERROR and the AI SDK error are upstream errors with their messages', () => {
    expect(
      decodeAll(
        SSE,
        sse([data({ type: 'response.failed', response: { error: { code: 'server_error', message: 'boom' } } })]),
      ),
    ).toEqual([{ type: 'error', message: 'boom', code: 'server_error' }]);
    expect(decodeAll(SSE, sse([data({ type: 'RUN_ERROR', message: 'run broke', code: 'E1' })]))).toEqual([
      { type: 'error', message: 'run broke', code: 'E1' },
    ]);
    expect(decodeAll(SSE, sse([data({ type: 'error', errorText: 'sdk broke' })]))).toEqual([
      { type: 'error', message: 'sdk broke' },
    ]);
    expect(
      decodeAll(SSE, sse([data({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })])),
    ).toEqual([{ type: 'error', message: 'Overloaded', code: 'overloaded_error' }]);
  });

  it('a chat completion chunk carrying an error is an error', () => {
    const chunk = { object: 'chat.completion.chunk', error: { message: 'limit' }, choices: [{ delta: {} }] };
    expect(decodeAll(SSE, sse([data(chunk)]))).toEqual([{ type: 'error', message: 'limit' }]);
  });

  it('text after the protocol end is not read; a step still running at the end is done', () => {
    const body = sse([
      data({ type: 'TOOL_CALL_START', toolCallId: 't', toolCallName: 'search' }),
      data({ type: 'RUN_FINISHED' }),
      data({ delta: 'after' }),
    ]);
    expect(decodeAll(SSE, body)).toEqual([
      { type: 'step', step: { id: 't', title: 'search', state: 'running' } },
      { type: 'step', step: { id: 't', title: 'search', state: 'done' } },
      { type: 'end' },
    ]);
  });

  it('an Anthropic message that stopped for a tool does not end the reply; the next message does', () => {
    const body = sse([
      data({ type: 'message_delta', delta: { stop_reason: 'tool_use' } }),
      data({ type: 'message_stop' }),
      data({ type: 'message_start', message: {} }),
      data({ type: 'content_block_delta', delta: { type: 'text_delta', text: 'more' } }),
      data({ type: 'message_delta', delta: { stop_reason: 'end_turn' } }),
      data({ type: 'message_stop' }),
      data({ delta: 'never' }),
    ]);
    expect(decodeAll(SSE, body)).toEqual([{ type: 'text', text: 'more' }, { type: 'end' }]);
  });

  it('a failed tool is a failed step', () => {
    const body = sse([
      data({ type: 'tool-input-start', toolCallId: 't', toolName: 'fetch' }),
      data({ type: 'tool-output-error', toolCallId: 't', errorText: 'OUTPUT-LEAK' }),
      data({ type: 'finish' }),
    ]);
    expect(seen(decodeAll(SSE, body)).steps).toEqual([
      { id: 't', title: 'fetch', state: 'running' },
      { id: 't', title: 'fetch', state: 'failed' },
    ]);
  });
});

describe('the seed forms’ named events', () => {
  it('a status without id gets a stable generated id; a new one means the last is done', () => {
    const body =
      'event: status\ndata: {"text":"Searching"}\n\n' +
      'event: status\ndata: Reading pages\n\n' +
      'event: status\ndata: {"text":"Reading pages","state":"done"}\n\n' +
      'event: status\ndata: {"text":"Searching","state":"failed"}\n\n';
    expect(seen(decodeAll(SSE, body)).steps).toEqual([
      { id: 'status-1', title: 'Searching', state: 'running' },
      { id: 'status-1', title: 'Searching', state: 'done' },
      { id: 'status-2', title: 'Reading pages', state: 'running' },
      { id: 'status-2', title: 'Reading pages', state: 'done' },
      { id: 'status-1', title: 'Searching', state: 'failed' },
    ]);
  });

  it('reasoning is never shown, as SSE name or JSON type; a status with an error field is a step, not an error', () => {
    const body =
      'event: reasoning\ndata: REASONING-LEAK\n\n' +
      'event: reasoning\ndata: {"delta":"REASONING-LEAK"}\n\n' +
      'data: {"type":"reasoning","text":"REASONING-LEAK"}\n\n' +
      'event: status\ndata: {"id":"x","text":"Fetch","state":"failed","error":"timeout"}\n\n' +
      'data: {"delta":"ok"}\n\n';
    const s = seen(decodeAll(SSE, body));
    expect(s.text).toBe('ok');
    expect(s.steps).toEqual([{ id: 'x', title: 'Fetch', state: 'failed' }]);
    expect(s.last).toBe('end');
  });

  it('sources: http(s) only, each once; a plain source event is its URL', () => {
    const body =
      'event: source\ndata: https://a.example/x\n\n' +
      'event: source\ndata: {"url":"https://a.example/x","title":"again"}\n\n' +
      'event: source\ndata: {"url":"javascript:alert(1)"}\n\n' +
      'data: {"type":"source","url":"http://b.example/","title":" B \\n title "}\n\n';
    expect(seen(decodeAll(SSE, body)).sources).toEqual([
      { url: 'https://a.example/x' },
      { url: 'http://b.example/', title: 'B title' },
    ]);
  });
});

describe('files', () => {
  const csv = 'a,b\n1,2\n';
  const b64 = Buffer.from(csv).toString('base64');
  const fileEvents = (body: string, maxFileBytes?: number): AgentFile[] => {
    const d = createDecoder(NDJSON, maxFileBytes === undefined ? {} : { maxFileBytes });
    return seen([...d.push(enc.encode(body)), ...d.finish()]).files;
  };
  const line = (obj: Record<string, unknown>) => `${JSON.stringify(obj)}\n`;

  it('base64 and data URLs are decoded; the type comes from the event or the data URL', () => {
    const files = fileEvents(
      line({ type: 'file', name: 'data.csv', mime: 'text/csv', data: b64 }) +
        line({ type: 'file', url: `data:image/png;base64,${b64}` }) +
        line({ type: 'file', name: 'note.txt', data: 'data:text/plain,hi%20there' }),
    );
    expect(files).toEqual([
      { name: 'data.csv', mime: 'text/csv', size: 8, data: new Uint8Array(Buffer.from(csv)) },
      { name: 'image.png', mime: 'image/png', size: 8, data: new Uint8Array(Buffer.from(csv)) },
      { name: 'note.txt', mime: 'text/plain', size: 8, data: new Uint8Array(Buffer.from('hi there')) },
    ]);
  });

  it('an https URL is kept (named from its path); any other URL is dropped and the file only named', () => {
    const files = fileEvents(
      line({ type: 'file', url: 'https://cdn.example/charts/chart.png', mediaType: 'image/png' }) +
        line({ type: 'file', name: 'x.png', url: 'http://cdn.example/x.png' }) +
        line({ type: 'file', name: '../../etc/passwd', url: 'file:///etc/passwd' }),
    );
    expect(files).toEqual([
      { name: 'chart.png', mime: 'image/png', url: 'https://cdn.example/charts/chart.png' },
      { name: 'x.png' },
      { name: 'passwd' },
    ]);
  });

  it('over the size cap: named with its size, no bytes; the rest of the reply still comes', () => {
    const big = Buffer.alloc(3000, 7).toString('base64');
    const d = createDecoder(NDJSON, { maxFileBytes: 1000 });
    const s = seen([
      ...d.push(enc.encode(line({ type: 'file', name: 'big.bin', data: big }) + line({ delta: 'after' }))),
      ...d.finish(),
    ]);
    expect(s.files).toEqual([{ name: 'big.bin', size: 3000 }]);
    expect(s.text).toBe('after');
  });

  it('at most 10 files a reply; not base64 is no bytes', () => {
    const body = Array.from({ length: 12 }, (_v, i) => line({ type: 'file', name: `f${i}.txt`, data: b64 })).join('');
    const files = fileEvents(body);
    expect(files.map((f) => f.name)).toEqual(Array.from({ length: 10 }, (_v, i) => `f${i}.txt`));
    expect(fileEvents(line({ type: 'file', name: 'bad', data: '%%%not base64' }))).toEqual([{ name: 'bad' }]);
  });

  it('a Responses image generation result is an image file', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64');
    const body = line({
      type: 'response.output_item.done',
      item: { type: 'image_generation_call', id: 'ig', status: 'completed', result: png },
    });
    expect(fileEvents(body)).toEqual([
      { name: 'image.png', mime: 'image/png', size: 4, data: new Uint8Array([0x89, 0x50, 0x4e, 0x47]) },
    ]);
  });

  it('a Markdown image in the text stays text', () => {
    expect(seen(decodeAll(NDJSON, line({ delta: '![chart](https://x.example/c.png)' }))).text).toBe(
      '![chart](https://x.example/c.png)',
    );
  });
});

describe('bounds a reply', () => {
  const line = (obj: Record<string, unknown>) => `${JSON.stringify(obj)}\n`;

  it('at most 100 steps and 50 sources; a known step still updates; long ids and titles are cut', () => {
    let body = '';
    for (let i = 0; i < 120; i++) body += line({ type: 'status', id: `s${i}`, text: `step ${i}` });
    body += line({ type: 'status', id: 's0', state: 'done' });
    for (let i = 0; i < 60; i++) body += line({ type: 'source', url: `https://s.example/${i}` });
    const s = seen(decodeAll(NDJSON, body));
    const ids = new Set(s.steps.map((x) => x.id));
    expect(ids.size).toBe(100);
    expect(s.steps.filter((x) => x.id === 's0').map((x) => x.state)).toEqual(['running', 'done']);
    expect(s.sources).toHaveLength(50);
    const long = seen(decodeAll(NDJSON, line({ type: 'tool', id: 'i'.repeat(500), name: 't'.repeat(500) })));
    expect(long.steps.map((x) => [x.id.length, x.title.length, x.state])).toEqual([
      [200, 200, 'running'],
      [200, 200, 'done'],
    ]);
  });

  it('inline bytes: at most three files at the cap a reply, later ones only named', () => {
    const b64 = Buffer.alloc(1000, 1).toString('base64');
    const body = Array.from({ length: 5 }, (_v, i) => line({ type: 'file', name: `f${i}`, data: b64 })).join('');
    const d = createDecoder(NDJSON, { maxFileBytes: 1000 });
    const files = seen([...d.push(enc.encode(body)), ...d.finish()]).files;
    expect(files.map((f) => [f.name, f.size, f.data?.byteLength])).toEqual([
      ['f0', 1000, 1000],
      ['f1', 1000, 1000],
      ['f2', 1000, 1000],
      ['f3', 1000, undefined],
      ['f4', 1000, undefined],
    ]);
  });
});

describe('plain services keep the tolerant rules', () => {
  it('a message type, a bare delta, a chat completion delta and unknown types are text as before', () => {
    const body =
      line({ type: 'message', content: 'a' }) +
      line({ delta: 'b' }) +
      line({ choices: [{ delta: { content: 'c' } }] }) +
      line({ type: 'token', token: 'd' }) +
      line({ type: 'text', text: 'e' });
    expect(seen(decodeAll(NDJSON, body)).text).toBe('abcde');
  });
  const line = (obj: Record<string, unknown>) => `${JSON.stringify(obj)}\n`;
});
