// Public types of the upstream emulator (see docs/emulator.md).

/** The API a request was made in: the seed's Form A or B, or OpenAI's Chat Completions or Responses. */
export type ApiForm = 'a' | 'b' | 'chat-completions' | 'responses';
/** What the emulator serves: one API, `both` seed forms, or `all` four. */
export type EmulatorForm = ApiForm | 'both' | 'all';
export type EmulatorStreamFormat = 'sse-json' | 'sse-text' | 'ndjson' | 'json-preamble' | 'plain';
export type StreamIds = 'header' | 'event' | 'both' | 'none';
export type ChatEndpoint = 'send' | 'stream' | 'history' | 'list';

export const STREAM_FORMATS: readonly EmulatorStreamFormat[] = [
  'sse-json',
  'sse-text',
  'ndjson',
  'json-preamble',
  'plain',
];
export const EMULATOR_FORMS: readonly EmulatorForm[] = ['a', 'b', 'both', 'chat-completions', 'responses', 'all'];
export const STREAM_IDS: readonly StreamIds[] = ['header', 'event', 'both', 'none'];

export interface EmulatorOptions {
  /** 0 = any free port (default 0 in-process; the CLI defaults to 8787). */
  port?: number;
  host?: string;
  form?: EmulatorForm;
  apiKey?: string;
  bots?: string[];
  streamFormat?: EmulatorStreamFormat;
  /** Delay between stream chunks; 0 still yields to the event loop between chunks. */
  chunkDelayMs?: number;
  /** Longer messages (JS string length) are refused: Form A 400, Form B 400 MESSAGE_TOO_LONG. */
  maxMessageChars?: number;
  sessionIdleSeconds?: number;
  /** Where Form A streams reveal the conversation id. */
  streamIds?: StreamIds;
  /** Write every stream frame in two pieces split in its middle byte (exercises readers' buffering). */
  splitWrites?: boolean;
  /** The request log keeps at most this many entries, dropping the oldest (default 100,000). */
  maxRecordedRequests?: number;
  /** Clock for session expiry and timestamps (ms since epoch). */
  now?: () => number;
}

/** Options that can change while the emulator runs (`setOptions`, `POST /_emulator/options`). */
export type RuntimeOptions = Required<Omit<EmulatorOptions, 'port' | 'host' | 'now'>>;

export interface Fault {
  /** Answer with this status (and Form B `code`) instead of a reply. */
  status?: number;
  /** Form B error code; default from the status (429 RATE_LIMITED, 500 BOT_ERROR, ...). */
  code?: string;
  /** Error message in the body. */
  message?: string;
  /** How many matching requests get the fault (default 1). */
  times?: number;
  /** Sent as `Retry-After` (a 429 without it gets `Retry-After: 1`). */
  retryAfterSeconds?: number;
  /** Which requests match: 'any' (send or stream, the default), or one endpoint. */
  endpoint?: ChatEndpoint | 'any';
  /** Only requests of this form / bot match. */
  form?: ApiForm;
  botId?: string;
  /** Stream faults (like the directives): destroy the connection / stop writing / send an error event after N chunks. */
  cut?: number;
  stall?: number;
  error?: number;
}

export interface RecordedRequest {
  form: ApiForm;
  endpoint: ChatEndpoint;
  method: string;
  path: string;
  /** The bot id received (path for Form A, bot_id for Form B; undefined when absent). */
  botId: string | undefined;
  /** The `message` received (send/stream). */
  message: string | undefined;
  /** The conversation id received: Form A conversationId, Form B session_id (undefined when absent). */
  conversationId: string | undefined;
  /** Form B session_id as received (same as conversationId for Form B). */
  session_id?: string | undefined;
  metadata: unknown;
  /** The parsed JSON body (POST) or undefined. */
  body: unknown;
  /** Query parameters (GET). */
  query: Record<string, string>;
  /** Request headers, without authorization. */
  headers: Record<string, string | string[] | undefined>;
  /** Clock value when received. */
  at: number;
  /** The status the emulator answered with (set when decided). */
  status?: number;
}

export interface StoredMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  /** ISO date. */
  timestamp: string;
  metadata?: unknown;
}

export interface ConversationSnapshot {
  id: string;
  form: ApiForm;
  botId: string;
  createdAt: number;
  updatedAt: number;
  messages: StoredMessage[];
}

export interface Emulator {
  /** 'http://HOST:PORT' */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Every chat request received, in order. Cleared by reset(). */
  readonly requests: RecordedRequest[];
  /** The current runtime options. */
  readonly options: Readonly<RuntimeOptions>;
  /** Streams (A2/B2) still being written or held open; 0 once every client went away. */
  readonly openStreams: number;
  injectFault(fault: Fault): void;
  clearFaults(): void;
  setOptions(partial: Partial<RuntimeOptions>): void;
  /** Force a conversation (Form A) / session (Form B) to be expired. Returns whether it existed. */
  expire(conversationId: string): boolean;
  /** A copy of a stored conversation/session, or undefined. */
  conversation(conversationId: string): ConversationSnapshot | undefined;
  /** Clears faults, conversations and the request log. */
  reset(): void;
  /** Stops listening, ends open streams and sockets. Idempotent. */
  close(): Promise<void>;
}
