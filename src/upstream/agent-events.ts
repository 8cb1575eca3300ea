import { AG_UI_TYPE, agUiReader } from './agent-events/ag-ui.js';
import { AI_SDK_TYPES, aiSdkReader } from './agent-events/ai-sdk.js';
import { ANTHROPIC_TYPES, anthropicReader } from './agent-events/anthropic.js';
import { chatCompletionsReader } from './agent-events/chat-completions.js';
import { isObject, type Json, objectAt, str } from './agent-events/event-fields.js';
import { type AgentSink, type EventReader, ReplyNews } from './agent-events/reply-news.js';
import { responsesReader } from './agent-events/responses.js';
import { SEED_NAMES, SeedReader } from './agent-events/seed.js';

export type { AgentSink } from './agent-events/reply-news.js';
export { responseIdOf } from './agent-events/responses.js';

// An agent's stream, understood: the event shapes of the wire formats agent frameworks stream
// (OpenAI Responses, OpenAI Chat Completions chunks, the Vercel AI SDK UI message stream, AG-UI,
// Anthropic Messages) and the seed forms' named events (CONTRACT.md §4: `status`, `tool`,
// `source`, `file`, `reasoning`). Here: which protocol an event is, and the dispatch to that
// protocol's reader (agent-events/*.ts, one per protocol, made when a reply first speaks it), all
// telling one reply's news (agent-events/reply-news.ts). An event of a known protocol is wholly
// handled there: its answer text is text, its tool calls and steps are steps, its citations
// sources, its files files, and everything else of it (reasoning, tool arguments, tool output,
// bookkeeping) is dropped, never shown. An event of no known protocol is left to the tolerant
// rules of event-rules.ts. Detection is by the event's own `type` (or its SSE name), so one
// stream may mix shapes; a reader keeps only small, bounded state per reply.

type Protocol = 'seed' | 'responses' | 'chat' | 'ai-sdk' | 'ag-ui' | 'anthropic';

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

type Reader = Exclude<Protocol, 'seed'>;

/** One reply's agent events: each to its protocol's reader, all telling the one reply's news. */
export class AgentReader {
  private readonly news: ReplyNews;
  /** The readers of the protocols this reply spoke so far (a reply usually speaks one). */
  private readonly readers: Partial<Record<Reader, EventReader>> = {};
  private seedReader: SeedReader | undefined;

  constructor(sink: AgentSink, maxFileBytes?: number) {
    this.news = new ReplyNews(sink, maxFileBytes);
  }

  /** Reads an event of `protocol` (from protocolOf). */
  read(protocol: Protocol, obj: Json, eventName: string | undefined): void {
    const type = str(obj.type) ?? '';
    if (protocol !== 'seed') return this.reader(protocol)(type, obj);
    this.seed.read(eventName !== undefined && SEED_NAMES.has(eventName) ? eventName : type.toLowerCase(), obj);
  }

  /** A seed named event whose data is no JSON object: a status line, or a source URL. */
  readPlain(eventName: string, data: string): void {
    this.seed.readPlain(eventName, data);
  }

  /** The reply ended: nothing of it is still running. */
  finish(): void {
    this.news.settle('done');
  }

  private get seed(): SeedReader {
    return (this.seedReader ??= new SeedReader(this.news));
  }

  private reader(protocol: Reader): EventReader {
    return (this.readers[protocol] ??= this.make(protocol));
  }

  private make(protocol: Reader): EventReader {
    switch (protocol) {
      case 'responses':
        return responsesReader(this.news);
      case 'chat':
        return chatCompletionsReader(this.news);
      case 'ai-sdk':
        return aiSdkReader(this.news);
      case 'ag-ui':
        return agUiReader(this.news, (name, value) => this.seed.read(name, value));
      case 'anthropic':
        return anthropicReader(this.news);
    }
  }
}
