// `[protocol NAME]`: a reply streamed in the wire format of an agent protocol instead of the
// seed's shapes: OpenAI Responses, OpenAI Chat Completions chunks, the Vercel AI SDK UI message
// stream, AG-UI or Anthropic Messages, as SSE (with event names where the protocol has them) or,
// for the `ndjson` and `json-preamble` formats, as JSON lines. One writer a stream (they keep
// state: the open text block, the next index). What a protocol has no event for (a file in most,
// a source in AG-UI) goes out as the seed's named event of the same meaning. The stream's ids
// ride on the first and the last event, beside the protocol's own fields.
import type { ReplyPart } from './agent-replies.js';
import type { AgentProtocol } from './replies.js';
import { type FrameIds, idFields, type StreamWriter } from './stream-writers.js';
import type { EmulatorStreamFormat } from './types.js';

type Json = Record<string, unknown>;
/** One event: JSON (or SSE-only raw data such as `[DONE]`) and, for SSE, its event name. */
interface Frame {
  event?: string;
  data: Json | string;
}

/** A protocol's events for each moment of a stream. */
interface Encoder {
  start(ids: Json): Frame[];
  part(part: ReplyPart): Frame[];
  done(ids: Json): Frame[];
  error(message: string, code: string): Frame[];
}

const TOOL_OUTPUT = '{"ok":true}';
const typed = (data: Json): Frame => ({ event: String(data.type), data });
const plain = (data: Json): Frame => ({ data });

/** A part no protocol event carries: the seed's named event (`file`, or `source` in AG-UI). */
function seedFile(part: Extract<ReplyPart, { kind: 'file' }>): Frame {
  const where = part.url !== undefined ? { url: part.url } : { data: part.base64 ?? '' };
  return { event: 'file', data: { type: 'file', name: part.name, mime: part.mime, ...where } };
}

function responses(): Encoder {
  let text = false;
  const msg = 'msg_emu';
  const openText = (): Frame[] => {
    if (text) return [];
    text = true;
    return [
      typed({ type: 'response.output_item.added', item: { type: 'message', id: msg, role: 'assistant', content: [] } }),
      typed({ type: 'response.content_part.added', item_id: msg, part: { type: 'output_text', text: '' } }),
    ];
  };
  return {
    start: (ids) => [typed({ type: 'response.created', response: { id: 'resp_emu', status: 'in_progress' }, ...ids })],
    part(p) {
      switch (p.kind) {
        case 'reasoning':
          return [
            typed({ type: 'response.output_item.added', item: { type: 'reasoning', id: 'rs_emu' } }),
            typed({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_emu', delta: p.text }),
            typed({ type: 'response.output_item.done', item: { type: 'reasoning', id: 'rs_emu' } }),
          ];
        case 'step': {
          const item = { type: 'function_call', id: `fc_${p.id}`, call_id: p.id, name: p.name };
          if (p.state === 'done')
            return [
              typed({
                type: 'response.output_item.done',
                item: { type: 'function_call_output', call_id: p.id, output: TOOL_OUTPUT },
              }),
            ];
          return [
            typed({ type: 'response.output_item.added', item: { ...item, arguments: '' } }),
            typed({ type: 'response.function_call_arguments.delta', item_id: item.id, delta: p.args }),
            typed({ type: 'response.output_item.done', item: { ...item, arguments: p.args, status: 'completed' } }),
          ];
        }
        case 'text':
          return [...openText(), typed({ type: 'response.output_text.delta', item_id: msg, delta: p.text })];
        case 'source':
          return [
            typed({
              type: 'response.output_text.annotation.added',
              item_id: msg,
              annotation: { type: 'url_citation', url: p.url, title: p.title, start_index: 0, end_index: 0 },
            }),
          ];
        case 'file':
          return [seedFile(p)];
      }
    },
    done: (ids) => [
      ...(text
        ? [typed({ type: 'response.output_item.done', item: { type: 'message', id: msg, status: 'completed' } })]
        : []),
      typed({ type: 'response.completed', response: { id: 'resp_emu', status: 'completed', output: [] }, ...ids }),
    ],
    error: (message, code) => [
      typed({ type: 'response.failed', response: { status: 'failed', error: { code, message } } }),
    ],
  };
}

function chatCompletions(): Encoder {
  const chunk = (delta: Json, finish: string | null = null, ids: Json = {}): Frame =>
    plain({
      id: 'chatcmpl-emu',
      object: 'chat.completion.chunk',
      model: 'emulator',
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...ids,
    });
  return {
    start: (ids) => [chunk({ role: 'assistant', content: '' }, null, ids)],
    part(p) {
      switch (p.kind) {
        case 'reasoning':
          return [chunk({ reasoning_content: p.text })];
        case 'step':
          // A service that runs its tools streams their answers as `tool` deltas (never shown).
          if (p.state === 'done') return [chunk({ role: 'tool', tool_call_id: p.id, content: TOOL_OUTPUT })];
          return [
            chunk({
              tool_calls: [{ index: 0, id: p.id, type: 'function', function: { name: p.name, arguments: '' } }],
            }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: p.args } }] }),
          ];
        case 'text':
          return [chunk({ content: p.text })];
        case 'source':
          return [chunk({ annotations: [{ type: 'url_citation', url_citation: { url: p.url, title: p.title } }] })];
        case 'file':
          return [seedFile(p)];
      }
    },
    done: (ids) => [chunk({}, 'stop', ids), { data: '[DONE]' }],
    error: (message, code) => [plain({ error: { message, code } })],
  };
}

function aiSdk(): Encoder {
  let text = false;
  return {
    start: (ids) => [plain({ type: 'start', ...ids }), plain({ type: 'start-step' })],
    part(p) {
      switch (p.kind) {
        case 'reasoning':
          return [
            plain({ type: 'reasoning-start', id: 'rs-1' }),
            plain({ type: 'reasoning-delta', id: 'rs-1', delta: p.text }),
            plain({ type: 'reasoning-end', id: 'rs-1' }),
          ];
        case 'step':
          if (p.state === 'done')
            return [
              plain({ type: 'tool-output-available', toolCallId: p.id, output: JSON.parse(TOOL_OUTPUT) as Json }),
            ];
          return [
            plain({ type: 'tool-input-start', toolCallId: p.id, toolName: p.name }),
            plain({ type: 'tool-input-delta', toolCallId: p.id, inputTextDelta: p.args }),
            plain({
              type: 'tool-input-available',
              toolCallId: p.id,
              toolName: p.name,
              input: JSON.parse(p.args) as Json,
            }),
          ];
        case 'text': {
          const open = text ? [] : [plain({ type: 'text-start', id: 'txt-1' })];
          text = true;
          return [...open, plain({ type: 'text-delta', id: 'txt-1', delta: p.text })];
        }
        case 'source':
          return [plain({ type: 'source-url', sourceId: p.url, url: p.url, title: p.title })];
        case 'file':
          return [plain({ type: 'file', url: p.url ?? `data:${p.mime};base64,${p.base64 ?? ''}`, mediaType: p.mime })];
      }
    },
    done: (ids) => [
      ...(text ? [plain({ type: 'text-end', id: 'txt-1' })] : []),
      plain({ type: 'finish-step' }),
      plain({ type: 'finish', ...ids }),
      { data: '[DONE]' },
    ],
    error: (message) => [plain({ type: 'error', errorText: message })],
  };
}

function agUi(): Encoder {
  let text = false;
  const run = { threadId: 'thread-emu', runId: 'run-emu' };
  return {
    start: (ids) => [plain({ type: 'RUN_STARTED', ...run, ...ids })],
    part(p) {
      switch (p.kind) {
        case 'reasoning':
          return [
            plain({ type: 'THINKING_START' }),
            plain({ type: 'THINKING_TEXT_MESSAGE_START' }),
            plain({ type: 'THINKING_TEXT_MESSAGE_CONTENT', delta: p.text }),
            plain({ type: 'THINKING_TEXT_MESSAGE_END' }),
            plain({ type: 'THINKING_END' }),
          ];
        case 'step':
          if (p.state === 'done')
            return [
              plain({
                type: 'TOOL_CALL_RESULT',
                messageId: `tool-${p.id}`,
                toolCallId: p.id,
                content: TOOL_OUTPUT,
                role: 'tool',
              }),
            ];
          return [
            plain({ type: 'TOOL_CALL_START', toolCallId: p.id, toolCallName: p.name }),
            plain({ type: 'TOOL_CALL_ARGS', toolCallId: p.id, delta: p.args }),
            plain({ type: 'TOOL_CALL_END', toolCallId: p.id }),
          ];
        case 'text': {
          const open = text ? [] : [plain({ type: 'TEXT_MESSAGE_START', messageId: 'msg-emu', role: 'assistant' })];
          text = true;
          return [...open, plain({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'msg-emu', delta: p.text })];
        }
        case 'source':
          return [plain({ type: 'CUSTOM', name: 'source', value: { url: p.url, title: p.title } })];
        case 'file': {
          const where = p.url !== undefined ? { url: p.url } : { data: p.base64 ?? '' };
          return [plain({ type: 'CUSTOM', name: 'file', value: { name: p.name, mime: p.mime, ...where } })];
        }
      }
    },
    done: (ids) => [
      ...(text ? [plain({ type: 'TEXT_MESSAGE_END', messageId: 'msg-emu' })] : []),
      plain({ type: 'RUN_FINISHED', ...run, ...ids }),
    ],
    error: (message, code) => [plain({ type: 'RUN_ERROR', message, code })],
  };
}

function anthropic(): Encoder {
  let index = 0;
  let textBlock: number | undefined;
  let messages = 1;
  const message = (n: number, ids: Json = {}): Frame =>
    typed({
      type: 'message_start',
      message: { id: `msg_emu_${n}`, type: 'message', role: 'assistant', content: [] },
      ...ids,
    });
  const block = (at: number, content_block: Json): Frame =>
    typed({ type: 'content_block_start', index: at, content_block });
  const delta = (at: number, d: Json): Frame => typed({ type: 'content_block_delta', index: at, delta: d });
  const stop = (at: number): Frame => typed({ type: 'content_block_stop', index: at });
  return {
    start: (ids) => [message(1, ids)],
    part(p) {
      switch (p.kind) {
        case 'reasoning': {
          const at = index++;
          return [
            block(at, { type: 'thinking', thinking: '' }),
            delta(at, { type: 'thinking_delta', thinking: p.text }),
            delta(at, { type: 'signature_delta', signature: 'emulated' }),
            stop(at),
          ];
        }
        case 'step': {
          // A tool the service runs: the message stops for it, and the next message follows its answer.
          if (p.state === 'done') {
            index = 0;
            return [message(++messages)];
          }
          const at = index++;
          return [
            block(at, { type: 'tool_use', id: p.id, name: p.name, input: {} }),
            delta(at, { type: 'input_json_delta', partial_json: p.args }),
            stop(at),
            typed({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null } }),
            typed({ type: 'message_stop' }),
          ];
        }
        case 'text': {
          if (textBlock !== undefined) return [delta(textBlock, { type: 'text_delta', text: p.text })];
          textBlock = index++;
          return [block(textBlock, { type: 'text', text: '' }), delta(textBlock, { type: 'text_delta', text: p.text })];
        }
        case 'source': {
          const citation = {
            type: 'web_search_result_location',
            url: p.url,
            title: p.title,
            cited_text: '',
            encrypted_index: '',
          };
          return [delta(textBlock ?? 0, { type: 'citations_delta', citation })];
        }
        case 'file':
          return [seedFile(p)];
      }
    },
    done: (ids) => [
      ...(textBlock !== undefined ? [stop(textBlock)] : []),
      typed({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null } }),
      typed({ type: 'message_stop', ...ids }),
    ],
    error: (message, code) => [{ event: 'error', data: { type: 'error', error: { type: code, message } } }],
  };
}

const ENCODERS: Record<AgentProtocol, () => Encoder> = {
  responses,
  'chat-completions': chatCompletions,
  'ai-sdk': aiSdk,
  'ag-ui': agUi,
  anthropic,
};

function encode(frames: Frame[], lines: boolean): string {
  let out = '';
  for (const f of frames) {
    const data = typeof f.data === 'string' ? f.data : JSON.stringify(f.data);
    if (lines) {
      if (typeof f.data !== 'string') out += `${data}\n`;
    } else out += `${f.event ? `event: ${f.event}\n` : ''}data: ${data}\n\n`;
  }
  return out;
}

/**
 * A writer for one stream in `protocol`: JSON lines in the `ndjson` and `json-preamble` formats
 * (the latter behind its `)]}'` line), SSE in the others (`plain` too: a protocol needs events).
 */
export function protocolWriter(protocol: AgentProtocol, format: EmulatorStreamFormat): StreamWriter {
  const enc = ENCODERS[protocol]();
  const lines = format === 'ndjson' || format === 'json-preamble';
  // Form A's ids as `conversationId`/`messageId`, Form B's as `session_id`/`message_id`.
  const ids = (frameIds: FrameIds): Json => idFields(frameIds, false);
  const writer: StreamWriter = {
    contentType: lines
      ? `${format === 'ndjson' ? 'application/x-ndjson' : 'application/json'}; charset=utf-8`
      : 'text/event-stream; charset=utf-8',
    start: (frameIds) => (format === 'json-preamble' ? ")]}'\n" : '') + encode(enc.start(ids(frameIds)), lines),
    delta: (text) => encode(enc.part({ kind: 'text', text }), lines),
    part: (part) => encode(enc.part(part), lines),
    done: (frameIds) => encode(enc.done(ids(frameIds)), lines),
    error: (message, code) => encode(enc.error(message, code), lines),
  };
  return writer;
}

/**
 * One part in `protocol`'s own SSE events, for a writer that frames the text itself (the
 * emulator's OpenAI-compatible forms): their agent parts (steps, reasoning, sources) look as a
 * real server's do.
 */
export function protocolParts(protocol: AgentProtocol): (part: ReplyPart) => string {
  const enc = ENCODERS[protocol]();
  return (part) => encode(enc.part(part), false);
}
