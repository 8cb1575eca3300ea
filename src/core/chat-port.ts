// The upstream chat service as the core sees it. src/upstream implements it for Form A and Form B;
// the core never knows which form, which HTTP client, or which stream format is behind it: it
// sees only the capabilities below and an opaque flavor.

import type { AttachmentInfo } from './reply/attachments.js';

/** Where a message came from, sent as `metadata` with every upstream send (absent values left out). */
export interface ChatMetadata {
  source: 'slack' | 'discord' | 'playground' | 'terminal' | 'test';
  workspaceId?: string;
  channelId?: string;
  threadId?: string;
  userId?: string;
  userName?: string;
  messageId?: string;
  /** The message is a forward of another (its text says so too). */
  forwarded?: boolean;
  /**
   * What the user was looking at in the platform when writing, most relevant first (Slack's
   * Agent messaging experience: the channel open beside the agent's DM).
   */
  viewing?: ViewedItem[];
  /**
   * A new conversation's earlier messages in its place, oldest first (CONTEXT_MODE other than
   * `off`): what the assistant has not seen, e.g. a thread it was mentioned in midway.
   */
  context?: ContextMessage[];
  /** Files of the message that are described rather than sent as text (images, PDFs, …). */
  attachments?: AttachmentInfo[];
  /** The user's votes on earlier replies of this conversation, sent once with their next message. */
  feedback?: FeedbackNote[];
}

/** One thing the user was viewing (`metadata.viewing`). */
export interface ViewedItem {
  kind: 'channel' | 'message' | 'canvas' | 'list';
  /** The channel's, canvas's or list's id; a message's channel. */
  id: string;
  /** A message's ts. */
  messageId?: string;
  workspaceId?: string;
}

/** One vote in `metadata.feedback`. */
export interface FeedbackNote {
  /** The upstream's id of the reply voted on when known, else the platform message id. */
  messageId: string;
  vote: 'up' | 'down';
  /** When the user voted, ISO 8601. */
  at: string;
}

/** One earlier message of a place, as the upstream receives it in `metadata.context`. */
export interface ContextMessage {
  /** Display name (never a raw platform id). */
  author: string;
  /** `assistant`: the bridge's own earlier reply; `user`: anyone else. */
  role: 'user' | 'assistant';
  /** The text, mentions shown as `@Name`. */
  text: string;
  /** When it was written, ISO 8601. */
  ts: string;
}

export interface SendRequest {
  botId: string;
  message: string;
  /** The conversation (Form A conversationId / Form B session_id). Omitted: a new one the upstream names. */
  conversationId?: string;
  metadata?: ChatMetadata;
  signal?: AbortSignal;
}

export interface SendResult {
  text: string;
  conversationId?: string;
  messageId?: string;
  /** Set when the reply was cut short (`text` is what fits, possibly empty); absent for a whole reply. */
  endReason?: EndReason;
}

/**
 * Why a reply ended before the upstream finished it, though nothing failed. `too_long`: the reply
 * went past the client's maxReplyChars (CHAT_REPLY_MAX_CHARS); the client stopped reading and
 * aborted the request, and the text up to the cap is all there is.
 */
export type EndReason = 'too_long';

/**
 * One step of an assistant's work (a tool call, a web search, a named phase of an agent): shown
 * while it runs, never as answer text. The same `id` again updates the step (its state, its title).
 */
export interface AgentStep {
  id: string;
  /** What the user reads: "Searching the web", "get_weather". Never the tool's arguments or output. */
  title: string;
  state: 'running' | 'done' | 'failed';
}

/** A source the answer cites (a URL citation, a `source` event). */
export interface AgentSource {
  url: string;
  title?: string;
}

/**
 * An image or file the assistant made or points at. At most one of `url` (https) and `data` is
 * set; neither: the file could not be carried (over the size cap, or not https), only named.
 */
export interface AgentFile {
  name: string;
  /** Bytes, when the upstream said or sent them (also when `data` was left out as too large). */
  size?: number;
  /** MIME type when known (`image/png`); an image is one whose type starts with `image/`. */
  mime?: string;
  /** An https URL the platform shows (the bridge never fetches it itself). */
  url?: string;
  /** The bytes the upstream sent inline (a data URL or base64 in the event). */
  data?: Uint8Array;
}

/**
 * What a streamed reply yields, in order. The iterator ends after `end`; errors are thrown.
 * `step`, `source` and `file` are an agent's work beside the answer; a consumer that shows only
 * text ignores them (they are never text).
 */
export type StreamEvent =
  | { type: 'text'; text: string }
  | { type: 'ids'; conversationId?: string; messageId?: string }
  | { type: 'step'; step: AgentStep }
  | { type: 'source'; source: AgentSource }
  | { type: 'file'; file: AgentFile }
  | { type: 'end'; reason?: EndReason };

export interface ChatStream extends AsyncIterable<StreamEvent> {
  /** The conversation id known from the response headers (X-Conversation-Id), if any. */
  readonly conversationId: string | undefined;
  /** Abort the request and release the connection. Safe to call more than once. */
  cancel(): void;
}

export interface HistoryMessage {
  id: string;
  role: 'user' | 'assistant' | string;
  content: string;
  timestamp?: string;
}

export interface HistoryPage {
  conversationId: string;
  messages: HistoryMessage[];
  createdAt?: string;
  messageCount?: number;
  hasMore?: boolean;
}

export interface HistoryOptions {
  limit?: number;
  before?: string;
  after?: string;
}

export interface ConversationSummary {
  id: string;
  preview?: string;
  messageCount?: number;
  createdAt?: string;
  updatedAt?: string;
}

export interface ConversationList {
  conversations: ConversationSummary[];
  pagination?: { page: number; limit: number; total: number; hasMore: boolean };
}

export interface ListOptions {
  page?: number;
  limit?: number;
  since?: string;
}

/** What the core may rely on about a chat service. */
export interface ChatCapabilities {
  /**
   * New conversations are named by the upstream, in its replies (a response header, an `ids`
   * event, the send result), and a stream may not name one at all. Otherwise the bridge names
   * them with mintConversationId() before the first send and ids in replies are not news.
   */
  readonly idsFromReplies: boolean;
}

export interface ChatService {
  /**
   * Opaque name of the API behind the service, stored with each conversation: a conversation
   * made under one flavor is not continued under another (ids of one API mean nothing to the
   * other). The core only compares it for equality.
   */
  readonly flavor: string;
  readonly capabilities: ChatCapabilities;
  /** A fresh id for a new conversation, or undefined when the upstream names it (idsFromReplies). */
  mintConversationId(): string | undefined;
  /** One-response endpoint (A1/B1), retried per the error policy. */
  send(req: SendRequest): Promise<SendResult>;
  /**
   * Streaming endpoint (A2/B2). Resolves when the response headers arrived (after retries of
   * 429/5xx/connection failures); rejects with ChatError if the upstream refused. Errors after that
   * (an `error` event, a cut connection, the idle timeout) are thrown by the iterator.
   */
  stream(req: SendRequest): Promise<ChatStream>;
  history(botId: string, conversationId: string, opts?: HistoryOptions): Promise<HistoryPage>;
  listConversations(botId: string, opts?: ListOptions): Promise<ConversationList>;
  close(): Promise<void>;
}

export type ChatErrorKind =
  | 'rate_limited' // 429 / RATE_LIMITED (after the client's own retries)
  | 'server' // 5xx / BOT_ERROR (after retries)
  | 'network' // connection refused/reset before any byte (after retries)
  | 'timeout' // no response within CHAT_REQUEST_TIMEOUT_MS
  | 'unauthorized' // 401 / UNAUTHORIZED
  | 'too_long' // 400 MESSAGE_TOO_LONG (or the local CHAT_MAX_MESSAGE_CHARS)
  | 'unknown_bot' // 400 INVALID_BOT_ID, 404 for the bot
  | 'conversation_gone' // 404/410 or a *SESSION*/*EXPIRED*/*NOT_FOUND* code for a conversation id that was sent
  | 'bad_request' // other 4xx
  | 'stream_error' // the stream itself reported an error event
  | 'interrupted'; // the stream ended by a reset connection or the idle timeout, after it started

export class ChatError extends Error {
  override readonly name = 'ChatError';
  constructor(
    readonly kind: ChatErrorKind,
    message: string,
    readonly details: {
      status?: number;
      code?: string;
      retryAfterMs?: number;
      endpoint?: string;
      /** For `interrupted`: whether any text had been received before the cut. */
      partial?: boolean;
    } = {},
  ) {
    super(message);
  }
}
