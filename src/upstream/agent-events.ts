import { agUiReader, isAgUiReasoning, isAgUiType } from './agent-events/ag-ui.js';
import { aiSdkReader, isAiSdkType } from './agent-events/ai-sdk.js';
import { anthropicReader, isAnthropicType } from './agent-events/anthropic.js';
import { chatCompletionsReader, isChatChunk } from './agent-events/chat-completions.js';
import { type Json, str } from './agent-events/event-fields.js';
import { type AgentSink, type EventReader, ReplyNews } from './agent-events/reply-news.js';
import { isResponsesType, responsesReader } from './agent-events/responses.js';
import { SEED_NAMES, SeedReader } from './agent-events/seed.js';

export type { AgentSink } from './agent-events/reply-news.js';
export { responseIdOf } from './agent-events/responses.js';

// An agent's stream, understood: the event shapes of the wire formats agent frameworks stream
// (OpenAI Responses, OpenAI Chat Completions chunks, the Vercel AI SDK UI message stream, AG-UI,
// Anthropic Messages) and the seed forms' named events (CONTRACT.md §4: `status`, `tool`,
// `source`, `file`, `reasoning`), one reader per protocol (agent-events/*.ts), all telling one
// reply's news (agent-events/reply-news.ts). An event of a known protocol is wholly handled
// there: its answer text is text, its tool calls and steps are steps, its citations sources, its
// files files, and everything else of it (reasoning, tool arguments, tool output, bookkeeping) is
// dropped, never shown. An event of no known protocol is left to the tolerant rules of
// event-rules.ts. Detection (here) is by the event's own `type` (or its SSE name), so one stream
// may mix shapes; a reader keeps only small, bounded state per reply.

type Protocol = 'seed' | 'responses' | 'chat' | 'ai-sdk' | 'ag-ui' | 'anthropic';

/**
 * Which protocol an event belongs to, by its `type` (or SSE event name); undefined: none known,
 * the tolerant rules read it. A seed name as the SSE event name wins over the data's `type`.
 */
export function protocolOf(obj: Json, eventName: string | undefined): Protocol | undefined {
  if (eventName !== undefined && SEED_NAMES.has(eventName)) return 'seed';
  const type = str(obj.type);
  if (type !== undefined) {
    if (isResponsesType(type)) return 'responses';
    if (isAnthropicType(type)) return 'anthropic';
    if (isAgUiType(type)) return 'ag-ui';
    if (type === 'file' || SEED_NAMES.has(type.toLowerCase())) return 'seed';
    if (isAiSdkType(type)) return 'ai-sdk';
    // The AI SDK's error carries `errorText`; other errors are the tolerant rules' own.
    if (type === 'error' && typeof obj.errorText === 'string') return 'ai-sdk';
    return undefined;
  }
  return isChatChunk(obj) ? 'chat' : undefined;
}

/**
 * Whether an event's ids (`messageId`, …) are the reply's. An event about a tool call names the
 * tool's message, and AG-UI's reasoning messages have ids of their own.
 */
export function carriesReplyIds(protocol: Protocol, obj: Json): boolean {
  if (typeof obj.toolCallId === 'string' || typeof obj.tool_call_id === 'string') return false;
  return protocol !== 'ag-ui' || !isAgUiReasoning(str(obj.type) ?? '');
}

/** One reply's agent events: each to its protocol's reader, all telling the one reply's news. */
export class AgentReader {
  private readonly news: ReplyNews;
  private readonly seed: SeedReader;
  private readonly readers: Record<Exclude<Protocol, 'seed'>, EventReader>;

  constructor(sink: AgentSink, maxFileBytes?: number) {
    this.news = new ReplyNews(sink, maxFileBytes);
    this.seed = new SeedReader(this.news);
    this.readers = {
      responses: responsesReader(this.news),
      chat: chatCompletionsReader(this.news),
      'ai-sdk': aiSdkReader(this.news),
      'ag-ui': agUiReader(this.news, this.seed),
      anthropic: anthropicReader(this.news),
    };
  }

  /** Reads an event of `protocol` (from protocolOf). */
  read(protocol: Protocol, obj: Json, eventName: string | undefined): void {
    const type = str(obj.type) ?? '';
    if (protocol !== 'seed') return this.readers[protocol](type, obj);
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
}
