import { describe, expect, it } from 'vitest';
import { agentReplyParts } from './agent-replies.js';
import { protocolWriter } from './protocol-writers.js';
import { parseDirectives } from './replies.js';
import { writerFor } from './stream-writers.js';

// The emulator's agent commands: what they parse to, the parts of the reply in order, and the
// wire each writer makes of them (the reader's side is src/upstream/agent-emulator.test.ts).

describe('agent directives', () => {
  it('reads [steps] [sources] [image] [file], [agent] as all of them, and [protocol NAME]', () => {
    expect(parseDirectives('a [Steps] b [file]')).toEqual({ agent: { steps: true, file: true } });
    expect(parseDirectives('[agent] [protocol AG-UI] [chunks 2]')).toEqual({
      chunks: 2,
      agent: { steps: true, sources: true, image: true, file: true, reasoning: true },
      protocol: 'ag-ui',
    });
    expect(parseDirectives('[protocol nope] [stepss] [agent 3]')).toEqual({});
  });

  it('orders the parts: reasoning, each tool running then done, the text, sources, image, file', () => {
    const kinds = agentReplyParts('0123456789', 2, {
      steps: true,
      sources: true,
      image: true,
      file: true,
      reasoning: true,
    }).map((p) => (p.kind === 'step' ? `${p.id}:${p.state}` : p.kind));
    expect(kinds).toEqual([
      'reasoning',
      'call_1:running',
      'call_1:done',
      'call_2:running',
      'call_2:done',
      'text',
      'text',
      'source',
      'source',
      'file',
      'file',
    ]);
    expect(agentReplyParts('hi', undefined)).toEqual([{ kind: 'text', text: 'hi' }]);
  });
});

describe('the wire of an agent part', () => {
  const step = {
    kind: 'step',
    id: 'call_1',
    name: 'search_docs',
    title: 'Searching',
    state: 'running',
    args: '{"q":1}',
  } as const;

  it('seed forms: SSE named events, typed JSON lines, nothing in plain', () => {
    expect(writerFor('sse-json').part(step)).toBe(
      'event: status\ndata: {"id":"call_1","text":"Searching","state":"running"}\n\n',
    );
    expect(writerFor('sse-text').part({ kind: 'source', url: 'https://s/', title: 'S' })).toBe(
      'event: source\ndata: {"url":"https://s/","title":"S"}\n\n',
    );
    expect(writerFor('ndjson').part({ kind: 'reasoning', text: 'hmm' })).toBe('{"type":"reasoning","text":"hmm"}\n');
    expect(writerFor('plain').part(step)).toBe('');
    expect(writerFor('plain').part({ kind: 'text', text: 'x' })).toBe('x');
  });

  it('protocols: SSE with event names where the protocol has them, JSON lines in ndjson', () => {
    const sse = protocolWriter('responses', 'sse-json').part(step);
    expect(sse).toContain('event: response.output_item.added\ndata: {"type":"response.output_item.added"');
    expect(sse).toContain('"delta":"{\\"q\\":1}"');
    const lines = protocolWriter('ag-ui', 'ndjson').part(step).trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual([
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
    ]);
    expect(protocolWriter('chat-completions', 'json-preamble').start({})).toMatch(/^\)\]\}'\n\{/);
    expect(protocolWriter('ai-sdk', 'sse-text').done({})).toMatch(/data: \[DONE\]\n\n$/);
  });
});
