import type { AgentFile, AgentSource, AgentStep } from '../../src/core/chat-port.js';

// One short agent reply in each protocol the upstream reader knows: two tool calls, some
// reasoning, the answer "Hello world." and two sources. Reasoning, tool arguments and tool output
// carry the markers REASONING-LEAK, ARGS-LEAK and OUTPUT-LEAK: none may reach the answer text.
// Shared by src/upstream/agent-events.test.ts and the client tests; under test/ so never shipped.

type Json = Record<string, unknown>;

/** One event: its JSON (or, for SSE only, raw data such as `[DONE]`) and the SSE event name. */
export interface Frame {
  event?: string;
  data: Json | string;
  /** SSE only: the data is sent without its `type` (the event name says it). */
  nameOnly?: boolean;
}

export interface AgentFixture {
  protocol: string;
  frames: Frame[];
  steps: AgentStep[];
  sources: AgentSource[];
  /** The files it carries, where the protocol has a way to. */
  files: AgentFile[];
}

export const ANSWER = 'Hello world.';
const SRC_A = { url: 'https://docs.example/a', title: 'Doc A' };
const SRC_B = { url: 'https://news.example/b', title: 'News B' };
const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const PNG_B64 = Buffer.from(PNG).toString('base64');
const CSV = 'a,b\n1,2\n';
const CSV_B64 = Buffer.from(CSV).toString('base64');
const IMAGE_URL = 'https://cdn.example/charts/chart.png';
const pngFile: AgentFile = { name: 'image.png', mime: 'image/png', size: PNG.length, data: new Uint8Array(PNG) };
const csvFile: AgentFile = {
  name: 'table.csv',
  mime: 'text/csv',
  size: CSV.length,
  data: new Uint8Array(Buffer.from(CSV)),
};
const urlImage: AgentFile = { name: 'chart.png', mime: 'image/png', url: IMAGE_URL };
const run = (id: string, title: string): AgentStep => ({ id, title, state: 'running' });
const done = (id: string, title: string): AgentStep => ({ id, title, state: 'done' });

const named = (data: Json): Frame => ({ event: String(data.type), data });

const responses: AgentFixture = {
  protocol: 'openai-responses',
  frames: [
    named({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress', output: [] } }),
    named({ type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: 'rs_1' } }),
    named({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', delta: 'REASONING-LEAK ' }),
    named({ type: 'response.reasoning_text.delta', item_id: 'rs_1', delta: 'REASONING-LEAK ' }),
    named({ type: 'response.output_item.done', output_index: 0, item: { type: 'reasoning', id: 'rs_1' } }),
    named({
      type: 'response.output_item.added',
      item: { type: 'web_search_call', id: 'ws_1', status: 'in_progress' },
    }),
    named({ type: 'response.web_search_call.searching', item_id: 'ws_1' }),
    named({
      type: 'response.output_item.done',
      item: {
        type: 'web_search_call',
        id: 'ws_1',
        status: 'completed',
        action: { type: 'search', query: 'ARGS-LEAK' },
      },
    }),
    named({
      type: 'response.output_item.added',
      item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '' },
    }),
    named({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: '{"city":"ARGS-LEAK"}' }),
    named({ type: 'response.function_call_arguments.done', item_id: 'fc_1', arguments: '{"city":"ARGS-LEAK"}' }),
    named({
      type: 'response.output_item.done',
      item: {
        type: 'function_call',
        id: 'fc_1',
        call_id: 'call_1',
        name: 'get_weather',
        arguments: '{"city":"ARGS-LEAK"}',
      },
    }),
    named({
      type: 'response.output_item.done',
      item: { type: 'function_call_output', call_id: 'call_1', output: 'OUTPUT-LEAK' },
    }),
    named({
      type: 'response.output_item.added',
      item: { type: 'message', id: 'msg_1', role: 'assistant', content: [] },
    }),
    named({ type: 'response.content_part.added', item_id: 'msg_1', part: { type: 'output_text', text: '' } }),
    named({ type: 'response.output_text.delta', item_id: 'msg_1', delta: 'Hello' }),
    named({
      type: 'response.output_text.annotation.added',
      annotation: { type: 'url_citation', url: SRC_A.url, title: SRC_A.title, start_index: 0, end_index: 5 },
    }),
    named({ type: 'response.output_text.delta', item_id: 'msg_1', delta: ' world.' }),
    named({
      type: 'response.output_text.annotation.added',
      annotation: { type: 'url_citation', url: SRC_B.url, title: SRC_B.title, start_index: 6, end_index: 12 },
    }),
    named({ type: 'response.output_text.done', item_id: 'msg_1', text: ANSWER }),
    named({ type: 'response.content_part.done', item_id: 'msg_1', part: { type: 'output_text', text: ANSWER } }),
    named({
      type: 'response.output_item.done',
      item: { type: 'message', id: 'msg_1', content: [{ type: 'output_text', text: ANSWER }] },
    }),
    named({
      type: 'response.output_item.done',
      item: {
        type: 'image_generation_call',
        id: 'ig_1',
        status: 'completed',
        result: PNG_B64,
        revised_prompt: 'ARGS-LEAK',
      },
    }),
    named({
      type: 'response.completed',
      response: { id: 'resp_1', status: 'completed', output: [{ type: 'function_call', call_id: 'call_1' }] },
    }),
  ],
  steps: [
    run('ws_1', 'Searching the web'),
    done('ws_1', 'Searching the web'),
    run('call_1', 'get_weather'),
    done('call_1', 'get_weather'),
    done('ig_1', 'Generating an image'),
  ],
  sources: [SRC_A, SRC_B],
  files: [pngFile],
};

const chunk = (delta: Json, finish: string | null = null): Frame => ({
  data: { id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] },
});

const chatCompletions: AgentFixture = {
  protocol: 'openai-chat-completions',
  frames: [
    chunk({ role: 'assistant', content: null, reasoning_content: 'REASONING-LEAK ' }),
    chunk({ reasoning: 'REASONING-LEAK ' }),
    chunk({
      tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'search_docs', arguments: '' } }],
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"q":"ARGS-LEAK"}' } }] }),
    chunk({
      tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{' } }],
    }),
    chunk({ tool_calls: [{ index: 1, function: { arguments: '"city":"ARGS-LEAK"}' } }] }),
    chunk({}, 'tool_calls'),
    chunk({ role: 'assistant', content: 'Hello' }),
    chunk({
      content: ' world.',
      annotations: [
        { type: 'url_citation', url_citation: { ...SRC_A, start_index: 0, end_index: 5 } },
        { type: 'url_citation', url_citation: { ...SRC_B, start_index: 6, end_index: 12 } },
      ],
    }),
    chunk({}, 'stop'),
    { data: '[DONE]' },
  ],
  steps: [
    run('call_1', 'search_docs'),
    run('call_2', 'get_weather'),
    done('call_1', 'search_docs'),
    done('call_2', 'get_weather'),
  ],
  sources: [SRC_A, SRC_B],
  files: [],
};

const aiSdkTool = (id: string, name: string): Frame[] => [
  { data: { type: 'tool-input-start', toolCallId: id, toolName: name } },
  { data: { type: 'tool-input-delta', toolCallId: id, inputTextDelta: '{"q":"ARGS-LEAK"}' } },
  { data: { type: 'tool-input-available', toolCallId: id, toolName: name, input: { q: 'ARGS-LEAK' } } },
  { data: { type: 'tool-output-available', toolCallId: id, output: { text: 'OUTPUT-LEAK' } } },
];

const aiSdk: AgentFixture = {
  protocol: 'ai-sdk',
  frames: [
    { data: { type: 'start', messageId: 'msg_1' } },
    { data: { type: 'start-step' } },
    { data: { type: 'reasoning-start', id: 'r1' } },
    { data: { type: 'reasoning-delta', id: 'r1', delta: 'REASONING-LEAK ' } },
    { data: { type: 'reasoning-end', id: 'r1' } },
    ...aiSdkTool('call_1', 'search_docs'),
    ...aiSdkTool('call_2', 'get_weather'),
    { data: { type: 'finish-step' } },
    { data: { type: 'start-step' } },
    { data: { type: 'text-start', id: 't1' } },
    { data: { type: 'text-delta', id: 't1', delta: 'Hello' } },
    { data: { type: 'text-delta', id: 't1', delta: ' world.' } },
    { data: { type: 'text-end', id: 't1' } },
    { data: { type: 'source-url', sourceId: 's1', ...SRC_A } },
    { data: { type: 'source-url', sourceId: 's2', ...SRC_B } },
    { data: { type: 'data-weather', data: { note: 'OUTPUT-LEAK' } } },
    { data: { type: 'file', url: IMAGE_URL, mediaType: 'image/png' } },
    { data: { type: 'file', url: `data:image/png;base64,${PNG_B64}`, mediaType: 'image/png' } },
    { data: { type: 'finish-step' } },
    { data: { type: 'finish' } },
    { data: '[DONE]' },
  ],
  steps: [
    run('call_1', 'search_docs'),
    done('call_1', 'search_docs'),
    run('call_2', 'get_weather'),
    done('call_2', 'get_weather'),
  ],
  sources: [SRC_A, SRC_B],
  files: [urlImage, pngFile],
};

const agUiTool = (id: string, name: string): Frame[] => [
  { data: { type: 'TOOL_CALL_START', toolCallId: id, toolCallName: name, parentMessageId: 'm1' } },
  { data: { type: 'TOOL_CALL_ARGS', toolCallId: id, delta: '{"q":"ARGS-LEAK"}' } },
  { data: { type: 'TOOL_CALL_END', toolCallId: id } },
  { data: { type: 'TOOL_CALL_RESULT', messageId: `tool-${id}`, toolCallId: id, content: 'OUTPUT-LEAK', role: 'tool' } },
];

const agUi: AgentFixture = {
  protocol: 'ag-ui',
  frames: [
    { data: { type: 'RUN_STARTED', threadId: 'th_1', runId: 'run_1' } },
    { data: { type: 'THINKING_START' } },
    { data: { type: 'THINKING_TEXT_MESSAGE_START' } },
    { data: { type: 'THINKING_TEXT_MESSAGE_CONTENT', delta: 'REASONING-LEAK ' } },
    { data: { type: 'THINKING_TEXT_MESSAGE_END' } },
    { data: { type: 'THINKING_END' } },
    { data: { type: 'REASONING_MESSAGE_CONTENT', messageId: 'r1', delta: 'REASONING-LEAK ' } },
    { data: { type: 'STEP_STARTED', stepName: 'research' } },
    ...agUiTool('call_1', 'search_docs'),
    ...agUiTool('call_2', 'get_weather'),
    { data: { type: 'STEP_FINISHED', stepName: 'research' } },
    { data: { type: 'STATE_DELTA', delta: [{ op: 'add', path: '/x', value: 'OUTPUT-LEAK' }] } },
    { data: { type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' } },
    { data: { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'Hello' } },
    { data: { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: ' world.' } },
    { data: { type: 'TEXT_MESSAGE_END', messageId: 'm1' } },
    { data: { type: 'CUSTOM', name: 'source', value: SRC_A } },
    { data: { type: 'CUSTOM', name: 'source', value: SRC_B } },
    { data: { type: 'CUSTOM', name: 'file', value: { name: 'table.csv', mime: 'text/csv', data: CSV_B64 } } },
    { data: { type: 'RUN_FINISHED', threadId: 'th_1', runId: 'run_1' } },
  ],
  steps: [
    run('step:research', 'research'),
    run('call_1', 'search_docs'),
    done('call_1', 'search_docs'),
    run('call_2', 'get_weather'),
    done('call_2', 'get_weather'),
    done('step:research', 'research'),
  ],
  sources: [SRC_A, SRC_B],
  files: [csvFile],
};

const block = (index: number, content_block: Json): Frame =>
  named({ type: 'content_block_start', index, content_block });
const delta = (index: number, d: Json): Frame => named({ type: 'content_block_delta', index, delta: d });
const stop = (index: number): Frame => named({ type: 'content_block_stop', index });

const anthropic: AgentFixture = {
  protocol: 'anthropic',
  frames: [
    named({ type: 'message_start', message: { id: 'msg_1', role: 'assistant', content: [] } }),
    block(0, { type: 'thinking', thinking: '' }),
    delta(0, { type: 'thinking_delta', thinking: 'REASONING-LEAK ' }),
    delta(0, { type: 'signature_delta', signature: 'SIG-LEAK' }),
    stop(0),
    block(1, { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }),
    delta(1, { type: 'input_json_delta', partial_json: '{"query":"ARGS-LEAK"}' }),
    stop(1),
    block(2, {
      type: 'web_search_tool_result',
      tool_use_id: 'srvtoolu_1',
      content: [
        { type: 'web_search_result', ...SRC_A, encrypted_content: 'OUTPUT-LEAK' },
        { type: 'web_search_result', ...SRC_B, encrypted_content: 'OUTPUT-LEAK' },
      ],
    }),
    stop(2),
    block(3, { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: {} }),
    delta(3, { type: 'input_json_delta', partial_json: '{"city":"ARGS-LEAK"}' }),
    stop(3),
    named({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }),
    named({ type: 'message_stop' }),
    { event: 'ping', data: { type: 'ping' } },
    named({ type: 'message_start', message: { id: 'msg_2', role: 'assistant', content: [] } }),
    block(0, { type: 'text', text: '' }),
    delta(0, { type: 'text_delta', text: 'Hello' }),
    delta(0, {
      type: 'citations_delta',
      citation: { type: 'web_search_result_location', ...SRC_A, cited_text: 'OUTPUT-LEAK' },
    }),
    delta(0, { type: 'text_delta', text: ' world.' }),
    stop(0),
    named({ type: 'message_delta', delta: { stop_reason: 'end_turn' } }),
    named({ type: 'message_stop' }),
  ],
  steps: [
    run('srvtoolu_1', 'Searching the web'),
    done('srvtoolu_1', 'Searching the web'),
    run('toolu_2', 'get_weather'),
    done('toolu_2', 'get_weather'),
  ],
  sources: [SRC_A, SRC_B],
  files: [],
};

const seed = (type: string, data: Json): Frame => ({ event: type, data: { type, ...data }, nameOnly: true });

const seedForms: AgentFixture = {
  protocol: 'seed named events',
  frames: [
    { data: { type: 'start', conversationId: 'c1' } },
    seed('reasoning', { text: 'REASONING-LEAK ' }),
    seed('status', { id: 's1', text: 'Searching the web', state: 'running' }),
    seed('status', { id: 's1', text: 'Searching the web', state: 'done' }),
    seed('tool', { id: 't1', name: 'get_weather', state: 'running', arguments: 'ARGS-LEAK' }),
    seed('tool', { id: 't1', name: 'get_weather', state: 'done', output: 'OUTPUT-LEAK' }),
    { data: { type: 'delta', delta: 'Hello' } },
    { data: { type: 'delta', delta: ' world.' } },
    seed('source', SRC_A),
    seed('source', SRC_B),
    seed('file', { name: 'table.csv', mime: 'text/csv', data: CSV_B64 }),
    seed('file', { name: 'chart.png', mime: 'image/png', url: IMAGE_URL }),
    { data: { type: 'done', conversationId: 'c1', messageId: 'm1' } },
  ],
  steps: [
    run('s1', 'Searching the web'),
    done('s1', 'Searching the web'),
    run('t1', 'get_weather'),
    done('t1', 'get_weather'),
  ],
  sources: [SRC_A, SRC_B],
  files: [csvFile, urlImage],
};

export const AGENT_FIXTURES: readonly AgentFixture[] = [responses, chatCompletions, aiSdk, agUi, anthropic, seedForms];

export type WireFormat = 'sse' | 'ndjson' | 'json';

export const CONTENT_TYPES: Record<WireFormat, string> = {
  sse: 'text/event-stream',
  ndjson: 'application/x-ndjson',
  json: 'application/json',
};

/** The frames as a body of `format`: SSE events, JSON lines, or pretty-printed JSON objects. */
export function encodeFrames(frames: readonly Frame[], format: WireFormat): string {
  let out = '';
  for (const f of frames) {
    if (format === 'sse') {
      let data = f.data;
      if (f.nameOnly && typeof data !== 'string') {
        const { type: _type, ...rest } = data;
        data = rest;
      }
      out += `${f.event ? `event: ${f.event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
    } else if (typeof f.data !== 'string') {
      out += `${format === 'json' ? JSON.stringify(f.data, null, 2) : JSON.stringify(f.data)}\n`;
    }
  }
  return out;
}
