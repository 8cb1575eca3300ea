import { ChatError, type ContextMessage, type ConversationList, type SendRequest } from '../core/chat-port.js';
import { TRANSCRIPT_START } from '../core/reply/upstream-message.js';
import { firstString, isObject } from './event-rules.js';

// What the two OpenAI-compatible forms (Chat Completions, Responses) share: the base URL as their
// users write it, the extra request fields, the earlier messages a new conversation carries, and
// OpenAI's error codes in the port's kinds. The bot id is the model.

/** OpenAI's base URL as users know it (`http://localhost:11434/v1`): `/v1` added when missing. */
export function openAiBaseUrl(url: string): string {
  const u = new URL(url);
  const path = u.pathname.replace(/\/+$/, '');
  u.pathname = /\/v1$/.test(path) ? path : `${path}/v1`;
  u.search = '';
  u.hash = '';
  return u.toString().replace(/\/+$/, '');
}

/** The request body: CHAT_REQUEST_EXTRA as given, under the form's own fields (they win). */
export function withExtra(
  extra: Record<string, unknown> | undefined,
  own: Record<string, unknown>,
): Record<string, unknown> {
  return extra === undefined ? own : { ...extra, ...own };
}

/** One chat message of OpenAI's protocols. */
export interface OpenAiMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * A new conversation's earlier messages when CONTEXT_MODE=metadata put them in `metadata.context`
 * (OpenAI servers take no such metadata): as messages before the user's, names kept in the text.
 * In `message` mode the context is already in the message text, and this is empty.
 */
export function contextMessages(req: SendRequest): OpenAiMessage[] {
  // `message` mode: the core put the context in the message (and in metadata, for the seed's forms).
  if (req.message.startsWith(TRANSCRIPT_START)) return [];
  const context: ContextMessage[] = req.metadata?.context ?? [];
  return context.map((m) =>
    m.role === 'assistant'
      ? { role: 'assistant', content: m.text }
      : { role: 'user', content: `${m.author}: ${m.text}` },
  );
}

const MODEL_CODES = /^(model_not_found|invalid_model|model_not_available)$/i;
const PREVIOUS_GONE = /previous[_ ]response/i;
const TOO_LONG_CODES = /^(context_length_exceeded|string_above_max_length|message_too_long)$/i;

/**
 * OpenAI's errors in the port's kinds, where the shared mapping (errors.ts, made for the seed's
 * forms) reads them otherwise: `model_not_found` is the bot (the model) unknown, never a gone
 * conversation; a `previous_response_id` not found (400 or 404) is the conversation gone; a
 * context over the model's window is too long. Everything else is kept as it was mapped.
 */
export function openAiErrorKind(err: unknown, previousSent: boolean): unknown {
  if (!(err instanceof ChatError) || err.details.status === undefined) return err;
  const code = err.details.code;
  const status = err.details.status;
  let kind = err.kind;
  if (code !== undefined && MODEL_CODES.test(code)) kind = 'unknown_bot';
  else if (previousSent && (status === 400 || status === 404) && PREVIOUS_GONE.test(`${code ?? ''} ${err.message}`))
    kind = 'conversation_gone';
  else if (code !== undefined && TOO_LONG_CODES.test(code)) kind = 'too_long';
  else if (kind === 'conversation_gone' && !previousSent) kind = status === 404 ? 'unknown_bot' : 'bad_request';
  else if (kind === 'conversation_gone' && status === 404 && /\bmodel\b/i.test(err.message)) kind = 'unknown_bot';
  return kind === err.kind ? err : new ChatError(kind, err.message, err.details);
}

/** The text of a message's `content`: a string, or text parts (`{type: 'text'|'output_text', text}`). */
export function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const parts = content
    .filter(isObject)
    .filter((p) => p.type === 'text' || p.type === 'output_text' || p.type === 'input_text')
    .map((p) => firstString(p, ['text']) ?? '');
  return parts.length > 0 ? parts.join('') : undefined;
}

/** An OpenAI-style server (`kind`: Chat Completions, Responses) has no list of conversations (A4/B4). */
export function noConversationList(kind: string): Promise<ConversationList> {
  return Promise.reject(
    new ChatError('bad_request', `${kind} servers do not list conversations`, {
      endpoint: 'conversations',
      code: 'NOT_SUPPORTED',
    }),
  );
}
