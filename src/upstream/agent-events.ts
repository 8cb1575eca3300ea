import type { AgentFile, AgentSource, AgentStep } from '../core/chat-port.js';
import { FileBudget, type FileFields } from './agent-files.js';

// An agent's stream, understood: the event shapes of the wire formats agent frameworks stream
// (OpenAI Responses, OpenAI Chat Completions chunks, the Vercel AI SDK UI message stream, AG-UI,
// Anthropic Messages) and the seed forms' named events (CONTRACT.md §4: `status`, `tool`,
// `source`, `file`, `reasoning`), one reader function per protocol. An event of a known protocol
// is wholly handled here: its answer text is text, its tool calls and steps are steps, its
// citations sources, its files files, and everything else of it (reasoning, tool arguments, tool
// output, bookkeeping) is dropped, never shown. An event of no known protocol is left to the
// tolerant rules of event-rules.ts. Detection is by the event's own `type` (or its SSE name),
// so one stream may mix shapes; a reader keeps only small, bounded state per reply.

type Json = Record<string, unknown>;

/** Where a recognised event's meaning goes (event-rules.ts's EventCollector). */
export interface AgentSink {
  text(text: string): void;
  end(): void;
  error(message: string, code?: string): void;
  step(step: AgentStep): void;
  source(source: AgentSource): void;
  file(file: AgentFile): void;
}

type Protocol = 'seed' | 'responses' | 'chat' | 'ai-sdk' | 'ag-ui' | 'anthropic';

/** Steps, sources a reply: beyond these, new ones are ignored (updates of known steps still count). */
const MAX_STEPS = 100;
const MAX_SOURCES = 50;
const MAX_TITLE = 200;
const MAX_ID = 200;
const MAX_URL = 4096;

const SEED_NAMES = new Set(['status', 'tool', 'source', 'file', 'reasoning']);
const AI_SDK_TYPES = new Set([
  'start',
  'finish',
  'abort',
  'text-start',
  'text-delta',
  'text-end',
  'reasoning',
  'reasoning-start',
  'reasoning-delta',
  'reasoning-end',
  'tool-input-start',
  'tool-input-delta',
  'tool-input-available',
  'tool-input-error',
  'tool-output-available',
  'tool-output-error',
  'tool-output-denied',
  'tool-approval-request',
  'source-url',
  'source-document',
  'file',
  'start-step',
  'finish-step',
  'message-metadata',
]);
const AG_UI_TYPE =
  /^(?:(?:TEXT_MESSAGE|TOOL_CALL|STEP|RUN|STATE|MESSAGES|THINKING|REASONING|ACTIVITY|META)_[A-Z_]+|RAW|CUSTOM)$/;
const ANTHROPIC_TYPES = new Set([
  'message_start',
  'message_delta',
  'message_stop',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
]);

/** Titles of the hosted tools whose names say little to a reader. */
const TOOL_TITLES: Record<string, string> = {
  web_search_call: 'Searching the web',
  file_search_call: 'Searching files',
  code_interpreter_call: 'Running code',
  image_generation_call: 'Generating an image',
  computer_call: 'Using the computer',
  local_shell_call: 'Running a command',
  shell_call: 'Running a command',
  web_search: 'Searching the web',
  web_fetch: 'Reading a web page',
  code_execution: 'Running code',
  bash_code_execution: 'Running a command',
  text_editor_code_execution: 'Editing a file',
};
/** Responses output items the service itself runs: done when their item is. */
const HOSTED_ITEMS = new Set([
  'web_search_call',
  'file_search_call',
  'code_interpreter_call',
  'image_generation_call',
  'mcp_call',
]);

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const objectAt = (v: unknown, key: string): Json | undefined => (isObject(v) && isObject(v[key]) ? v[key] : undefined);

function title(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.replace(/\s+/g, ' ').trim();
  return t === '' ? undefined : t.slice(0, MAX_TITLE);
}

/** `running`, `done` or `failed` from the many spellings of a state; undefined when none. */
function stateOf(v: unknown): AgentStep['state'] | undefined {
  if (typeof v !== 'string') return undefined;
  const s = v.toLowerCase();
  if (['running', 'in_progress', 'started', 'start', 'pending', 'searching', 'generating', 'interpreting'].includes(s))
    return 'running';
  if (['done', 'completed', 'complete', 'finished', 'success', 'succeeded', 'ok'].includes(s)) return 'done';
  if (['failed', 'error', 'errored', 'cancelled', 'canceled', 'incomplete'].includes(s)) return 'failed';
  return undefined;
}

/**
 * Which protocol an event belongs to, by its `type` (or SSE event name); undefined: none known,
 * the tolerant rules read it. A seed name as the SSE event name wins over the data's `type`.
 */
export function protocolOf(obj: Json, eventName: string | undefined): Protocol | undefined {
  if (eventName !== undefined && SEED_NAMES.has(eventName)) return 'seed';
  const type = str(obj.type);
  if (type !== undefined) {
    if (type.startsWith('response.')) return 'responses';
    if (ANTHROPIC_TYPES.has(type)) return 'anthropic';
    if (AG_UI_TYPE.test(type)) return 'ag-ui';
    if (type === 'file' || SEED_NAMES.has(type.toLowerCase())) return 'seed';
    if (AI_SDK_TYPES.has(type) || type.startsWith('data-')) return 'ai-sdk';
    // The AI SDK's error carries `errorText`; other errors are the tolerant rules' own.
    if (type === 'error' && typeof obj.errorText === 'string') return 'ai-sdk';
    return undefined;
  }
  return isChatChunk(obj) ? 'chat' : undefined;
}

/** A Chat Completions chunk with more than text in it (text alone the tolerant rules read too). */
function isChatChunk(obj: Json): boolean {
  const choice = Array.isArray(obj.choices) && isObject(obj.choices[0]) ? obj.choices[0] : undefined;
  const delta = objectAt(choice, 'delta');
  if (!delta) return false;
  return (
    obj.object === 'chat.completion.chunk' ||
    delta.tool_calls !== undefined ||
    delta.reasoning_content !== undefined ||
    delta.reasoning !== undefined ||
    delta.annotations !== undefined ||
    delta.role === 'tool' ||
    typeof choice?.finish_reason === 'string'
  );
}

/**
 * Whether an event's ids (`messageId`, …) are the reply's. An event about a tool call names the
 * tool's message, and AG-UI's reasoning messages have ids of their own.
 */
export function carriesReplyIds(protocol: Protocol, obj: Json): boolean {
  if (typeof obj.toolCallId === 'string' || typeof obj.tool_call_id === 'string') return false;
  return protocol !== 'ag-ui' || !/^(?:THINKING|REASONING)_/.test(str(obj.type) ?? '');
}

/** The events of a Responses stream that name their response: its id is in each. */
const RESPONSE_ID_TYPES = new Set([
  'response.created',
  'response.in_progress',
  'response.completed',
  'response.incomplete',
]);

/** The id of the response a Responses event names (created, in progress, completed); else undefined. */
export function responseIdOf(obj: Json): string | undefined {
  if (!RESPONSE_ID_TYPES.has(str(obj.type) ?? '')) return undefined;
  const id = str(objectAt(obj, 'response')?.id);
  return id === '' ? undefined : id;
}

/** One reply's agent events: the protocol readers, and what they must remember between events. */
export class AgentReader {
  private readonly steps = new Map<string, AgentStep>();
  private readonly sources = new Set<string>();
  private readonly files: FileBudget;
  /** Seed `status` events without an id: one generated id per title, and the one shown last. */
  private readonly statusIds = new Map<string, string>();
  private lastStatus: string | undefined;
  /** Chat Completions: the id of each tool call index (only the first delta of a call has it). */
  private readonly chatCalls = new Map<number, string>();
  /** Anthropic: why the last message stopped (`tool_use`: another message follows). */
  private stopReason: string | undefined;

  constructor(
    private readonly sink: AgentSink,
    maxFileBytes?: number,
  ) {
    this.files = new FileBudget(maxFileBytes);
  }

  /** Reads an event of `protocol` (from protocolOf). */
  read(protocol: Protocol, obj: Json, eventName: string | undefined): void {
    const type = str(obj.type) ?? '';
    switch (protocol) {
      case 'seed':
        return this.seed(eventName !== undefined && SEED_NAMES.has(eventName) ? eventName : type.toLowerCase(), obj);
      case 'responses':
        return this.responses(type, obj);
      case 'chat':
        return this.chat(obj);
      case 'ai-sdk':
        return this.aiSdk(type, obj);
      case 'ag-ui':
        return this.agUi(type, obj);
      case 'anthropic':
        return this.anthropic(type, obj);
    }
  }

  /** A seed named event whose data is no JSON object: a status line, or a source URL. */
  readPlain(eventName: string, data: string): void {
    if (eventName === 'status' || eventName === 'tool') this.seed(eventName, { text: data });
    else if (eventName === 'source') this.seed(eventName, { url: data.trim() });
  }

  /** The reply ended: nothing of it is still running. */
  finish(): void {
    this.settle('done');
  }

  // ---- the shared parts ----

  /** A step's news: sent when it is new or changed. Unknown ids past MAX_STEPS are ignored. */
  private step(rawId: string, newTitle: string | undefined, state: AgentStep['state']): void {
    const id = rawId.slice(0, MAX_ID);
    const known = this.steps.get(id);
    if (!known && this.steps.size >= MAX_STEPS) return;
    const step: AgentStep = { id, title: newTitle ?? known?.title ?? 'Working', state };
    if (known && known.title === step.title && known.state === step.state) return;
    this.steps.set(id, step);
    this.sink.step({ ...step });
  }

  /** Marks a known step; an unknown id is no news (its start was not seen or not shown). */
  private stepEnded(id: string | undefined, state: 'done' | 'failed'): void {
    if (id !== undefined && this.steps.has(id.slice(0, MAX_ID))) this.step(id, undefined, state);
  }

  /** Every step still running becomes `state`. */
  private settle(state: 'done' | 'failed'): void {
    for (const s of [...this.steps.values()]) if (s.state === 'running') this.step(s.id, undefined, state);
  }

  private source(url: unknown, name: unknown): void {
    if (typeof url !== 'string' || url.length > MAX_URL || this.sources.size >= MAX_SOURCES) return;
    let protocol: string;
    try {
      protocol = new URL(url).protocol;
    } catch {
      return;
    }
    // A link to follow: never javascript:, data: or anything a platform would not link.
    if ((protocol !== 'https:' && protocol !== 'http:') || this.sources.has(url)) return;
    this.sources.add(url);
    const t = title(name);
    this.sink.source(t === undefined ? { url } : { url, title: t });
  }

  private file(fields: FileFields): void {
    const file = this.files.take(fields);
    if (file) this.sink.file(file);
  }

  private text(v: unknown): void {
    if (typeof v === 'string') this.sink.text(v);
  }

  // ---- the seed forms' named events (CONTRACT.md §4) ----

  private seed(name: string, obj: Json): void {
    if (name === 'source') this.source(obj.url, obj.title);
    else if (name === 'file')
      this.file({
        name: obj.name ?? obj.filename,
        mime: obj.mime ?? obj.mediaType ?? obj.mimeType ?? obj.media_type ?? obj.contentType,
        url: obj.url,
        data: obj.data,
        size: obj.size,
      });
    else if (name === 'status' || name === 'tool') this.status(obj);
    // `reasoning` is never shown.
  }

  /**
   * `{id?, text, state?}`. Without an id, the title is the step: the same title again updates it,
   * and a new running one means the one before it is done (a status line moving on).
   */
  private status(obj: Json): void {
    const t = title(obj.text) ?? title(obj.title) ?? title(obj.name) ?? title(obj.message);
    const state = stateOf(obj.state) ?? stateOf(obj.status) ?? 'running';
    const given = str(obj.id) ?? (typeof obj.id === 'number' ? String(obj.id) : undefined);
    if (given !== undefined && given !== '') {
      this.step(given, t, state);
      return;
    }
    if (t === undefined) return;
    let id = this.statusIds.get(t);
    if (id === undefined) {
      if (this.statusIds.size >= MAX_STEPS) return;
      id = `status-${this.statusIds.size + 1}`;
      this.statusIds.set(t, id);
    }
    if (state === 'running' && this.lastStatus !== undefined && this.lastStatus !== id)
      this.stepEnded(this.lastStatus, 'done');
    this.lastStatus = id;
    this.step(id, t, state);
  }

  // ---- OpenAI Responses ----

  private responses(type: string, obj: Json): void {
    switch (type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        return this.text(obj.delta);
      case 'response.output_item.added':
      case 'response.output_item.done':
        return this.responsesItem(objectAt(obj, 'item'), type.endsWith('.done'));
      case 'response.output_text.annotation.added': {
        const a = objectAt(obj, 'annotation');
        if (a?.type === 'url_citation') this.source(a.url, a.title);
        return;
      }
      case 'response.completed':
      case 'response.incomplete':
      case 'response.done': {
        // A function call the service did not answer: an agent loop goes on with another response.
        const output = objectAt(obj, 'response')?.output;
        const items = Array.isArray(output) ? output.filter(isObject) : [];
        const waiting = items.some(
          (i) => i.type === 'function_call' && this.steps.get(String(i.call_id))?.state === 'running',
        );
        if (!waiting) this.sink.end();
        return;
      }
      case 'response.failed': {
        const err = objectAt(objectAt(obj, 'response'), 'error');
        return this.sink.error(str(err?.message) ?? 'the response failed', str(err?.code));
      }
      default:
      // reasoning, argument deltas, the hosted tools' progress, bookkeeping: nothing to show
    }
  }

  private responsesItem(item: Json | undefined, done: boolean): void {
    const type = str(item?.type);
    if (!item || type === undefined || type === 'message' || type === 'reasoning') return;
    const id = str(item.call_id) ?? str(item.id);
    if (type.endsWith('_call_output')) {
      // The answer to a call the service made itself (an agent loop): that call is done.
      if (done || item.status === undefined) this.stepEnded(id, stateOf(item.status) === 'failed' ? 'failed' : 'done');
      return;
    }
    if (!type.endsWith('_call') || id === undefined) return;
    const name =
      type === 'function_call' || type === 'mcp_call' || type === 'custom_tool_call' ? title(item.name) : undefined;
    const t = name ?? TOOL_TITLES[type] ?? title(type.replace(/_call$/, '').replace(/_/g, ' '));
    const failed = stateOf(item.status) === 'failed';
    // A function call's item is done when its arguments are: the tool runs after that.
    const state = failed ? 'failed' : done && HOSTED_ITEMS.has(type) ? 'done' : 'running';
    this.step(id, t, state);
    if (done && type === 'image_generation_call' && typeof item.result === 'string')
      this.file({ data: item.result, mime: `image/${str(item.output_format) ?? 'png'}` });
  }

  // ---- OpenAI Chat Completions chunks ----

  private chat(obj: Json): void {
    const choice = Array.isArray(obj.choices) && isObject(obj.choices[0]) ? obj.choices[0] : undefined;
    const delta = objectAt(choice, 'delta') ?? {};
    if (delta.role === 'tool') {
      // A tool's answer, streamed by a service that runs its tools: that call is done; never text.
      this.stepEnded(str(delta.tool_call_id), 'done');
      return;
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls) {
        if (!isObject(call)) continue;
        const index = typeof call.index === 'number' ? call.index : 0;
        const given = str(call.id);
        const room = this.chatCalls.has(index) || this.chatCalls.size < MAX_STEPS;
        if (given !== undefined && given !== '' && room) this.chatCalls.set(index, given);
        const id = this.chatCalls.get(index) ?? `call-${index}`;
        const name = title(objectAt(call, 'function')?.name);
        if (!this.steps.has(id) && name !== undefined) this.step(id, name, 'running');
      }
    }
    if (Array.isArray(delta.annotations))
      for (const a of delta.annotations) {
        const c = objectAt(a, 'url_citation') ?? (isObject(a) ? a : undefined);
        this.source(c?.url, c?.title);
      }
    // Text after tool calls: the tools have answered.
    const text = str(delta.content) ?? str(delta.refusal);
    if (text !== undefined && text !== '') this.settle('done');
    this.text(text);
    if (Array.isArray(obj.citations)) for (const url of obj.citations) this.source(url, undefined);
    const finish = str(choice?.finish_reason);
    if (finish !== undefined && finish !== 'tool_calls') this.settle('done');
  }

  // ---- the Vercel AI SDK UI message stream ----

  private aiSdk(type: string, obj: Json): void {
    const id = str(obj.toolCallId);
    switch (type) {
      case 'text-delta':
        return this.text(obj.delta ?? obj.textDelta);
      case 'tool-input-start':
        if (id !== undefined) this.step(id, title(obj.title) ?? title(obj.toolName), 'running');
        return;
      case 'tool-input-available':
        if (id !== undefined && !this.steps.has(id)) this.step(id, title(obj.title) ?? title(obj.toolName), 'running');
        return;
      case 'tool-output-available':
        // A preliminary output: the tool is still at work.
        if (obj.preliminary !== true) this.stepEnded(id, 'done');
        return;
      case 'tool-input-error':
      case 'tool-output-error':
      case 'tool-output-denied':
        return this.stepEnded(id, 'failed');
      case 'source-url':
        return this.source(obj.url, obj.title);
      case 'finish':
      case 'abort':
        return this.sink.end();
      case 'error':
        return this.sink.error(str(obj.errorText) ?? 'upstream stream error');
      default:
      // reasoning, tool input deltas, steps of the model, metadata, data parts: nothing to show
    }
  }

  // ---- AG-UI ----

  private agUi(type: string, obj: Json): void {
    const id = str(obj.toolCallId);
    switch (type) {
      case 'TEXT_MESSAGE_CONTENT':
      case 'TEXT_MESSAGE_CHUNK':
        return this.text(obj.delta);
      case 'TOOL_CALL_START':
      case 'TOOL_CALL_CHUNK':
        if (id !== undefined && !this.steps.has(id) && title(obj.toolCallName) !== undefined)
          this.step(id, title(obj.toolCallName), 'running');
        return;
      case 'TOOL_CALL_RESULT':
        return this.stepEnded(id, 'done');
      case 'STEP_STARTED':
      case 'STEP_FINISHED': {
        const name = title(obj.stepName);
        if (name !== undefined) this.step(`step:${name}`, name, type === 'STEP_STARTED' ? 'running' : 'done');
        return;
      }
      case 'RUN_FINISHED':
        return this.sink.end();
      case 'RUN_ERROR':
        return this.sink.error(str(obj.message) ?? 'the run failed', str(obj.code));
      case 'CUSTOM': {
        // AG-UI has no citations or files of its own: a custom event named as a seed event is one.
        const name = str(obj.name)?.toLowerCase();
        if (name !== undefined && SEED_NAMES.has(name) && isObject(obj.value)) this.seed(name, obj.value);
        return;
      }
      default:
      // thinking, reasoning, tool arguments, state and message snapshots, raw and custom events
    }
  }

  // ---- Anthropic Messages ----

  private anthropic(type: string, obj: Json): void {
    switch (type) {
      case 'message_start':
        // A new message after one that stopped for tools: those tools have answered.
        if (this.stopReason === 'tool_use') this.settle('done');
        this.stopReason = undefined;
        return;
      case 'message_delta':
        this.stopReason = str(objectAt(obj, 'delta')?.stop_reason) ?? this.stopReason;
        return;
      case 'message_stop':
        if (this.stopReason !== 'tool_use' && this.stopReason !== 'pause_turn') this.sink.end();
        return;
      case 'content_block_start':
        return this.anthropicBlock(objectAt(obj, 'content_block'));
      case 'content_block_delta': {
        const delta = objectAt(obj, 'delta');
        if (delta?.type === 'text_delta') this.text(delta.text);
        else if (delta?.type === 'citations_delta') {
          const c = objectAt(delta, 'citation');
          this.source(c?.url ?? c?.source, c?.title);
        }
        return;
      }
      default:
      // content_block_stop: nothing to show
    }
  }

  private anthropicBlock(block: Json | undefined): void {
    const type = str(block?.type);
    if (!block || type === undefined) return;
    if (type === 'text') return this.text(block.text);
    if (type === 'tool_use' || type === 'server_tool_use' || type === 'mcp_tool_use') {
      const id = str(block.id);
      const name = str(block.name);
      const t = type === 'server_tool_use' && name !== undefined ? (TOOL_TITLES[name] ?? title(name)) : title(name);
      if (id !== undefined) this.step(id, t, 'running');
      return;
    }
    if (type.endsWith('_tool_result')) {
      const content = block.content;
      const failed = block.is_error === true || (isObject(content) && str(content.type)?.endsWith('_error') === true);
      this.stepEnded(str(block.tool_use_id), failed ? 'failed' : 'done');
      if (Array.isArray(content)) for (const r of content) if (isObject(r)) this.source(r.url, r.title);
    }
    // thinking, redacted thinking: never shown
  }
}
