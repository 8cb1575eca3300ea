import { ChatError, type ConversationSummary, type HistoryMessage, type SendResult } from '../core/chat-port.js';
import { firstString, idsOf, isObject } from './event-rules.js';

// JSON bodies of both forms → the port's types. Form A is documented (camelCase in an envelope);
// Form B's bodies are "not shown", so both readers accept either spelling, enveloped or not.

type Json = Record<string, unknown>;

/** What an address that answers 200 but is not the chat service (a web site, another API) gets. */
export const NOT_CHAT_API = 'NOT_CHAT_API';

export function notChatApi(endpoint: string, what: string, status?: number): ChatError {
  return new ChatError('bad_request', `${endpoint}: ${what}: this address is not the chat API`, {
    endpoint,
    code: NOT_CHAT_API,
    ...(status !== undefined ? { status } : {}),
  });
}

/** A list the chat API always sends (A3/B3 messages, A4/B4 conversations); without it, not the chat API. */
export function requireList(value: unknown, name: string, endpoint: string): unknown[] {
  if (!Array.isArray(value)) throw notChatApi(endpoint, `the answer has no "${name}" list`);
  return value;
}

/** The payload: Form A's `data` envelope, or the body itself. */
export function payload(body: unknown): Json {
  if (!isObject(body)) return {};
  return isObject(body.data) ? body.data : body;
}

const REPLY_KEYS = ['response', 'reply', 'text', 'content', 'message', 'answer', 'output'];

/** A1/B1: `{success, data: {response, conversationId, messageId}}` / `{response, session_id, message_id}`. */
export function sendResultOf(body: unknown, headerConversationId: string | undefined): SendResult {
  if (typeof body === 'string') return withIds({ text: body }, { conversationId: headerConversationId });
  const data = payload(body);
  const top = isObject(body) ? body : {};
  const text = firstString(data, REPLY_KEYS) ?? firstString(top, REPLY_KEYS) ?? '';
  const ids = { ...idsOf(top), ...idsOf(data) };
  return withIds({ text }, { conversationId: ids.conversationId ?? headerConversationId, messageId: ids.messageId });
}

function withIds(
  r: SendResult,
  ids: { conversationId?: string | undefined; messageId?: string | undefined },
): SendResult {
  if (ids.conversationId) r.conversationId = ids.conversationId;
  if (ids.messageId) r.messageId = ids.messageId;
  return r;
}

export function numberOf(obj: Json, keys: string[]): number | undefined {
  for (const k of keys) {
    const v = obj[k];
    if (typeof v === 'number' && Number.isFinite(v)) return v;
  }
  return undefined;
}

export function boolOf(obj: Json, keys: string[]): boolean | undefined {
  for (const k of keys) if (typeof obj[k] === 'boolean') return obj[k] as boolean;
  return undefined;
}

/** Assigns only the defined values (the port's types use exact optional properties). */
export function assignDefined<T extends object>(target: T, values: { [K in keyof T]?: T[K] | undefined }): T {
  for (const [k, v] of Object.entries(values)) if (v !== undefined) (target as Record<string, unknown>)[k] = v;
  return target;
}

export function messagesOf(list: unknown): HistoryMessage[] {
  if (!Array.isArray(list)) return [];
  return list.filter(isObject).map((m, i) =>
    assignDefined<HistoryMessage>(
      {
        id: firstString(m, ['id', 'message_id', 'messageId'], true) ?? String(i),
        role: firstString(m, ['role', 'sender', 'author']) ?? 'unknown',
        content: firstString(m, ['content', 'text', 'message']) ?? '',
      },
      { timestamp: firstString(m, ['timestamp', 'created_at', 'createdAt', 'time']) },
    ),
  );
}

export function summariesOf(list: unknown): ConversationSummary[] {
  if (!Array.isArray(list)) return [];
  return list.filter(isObject).map((c) =>
    assignDefined<ConversationSummary>(
      { id: firstString(c, ['id', 'conversationId', 'conversation_id', 'session_id', 'sessionId'], true) ?? '' },
      {
        preview: firstString(c, ['preview', 'last_message', 'lastMessage', 'title']),
        messageCount: numberOf(c, ['messageCount', 'message_count']),
        createdAt: firstString(c, ['createdAt', 'created_at']),
        updatedAt: firstString(c, ['updatedAt', 'updated_at']),
      },
    ),
  );
}
