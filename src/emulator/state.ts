// Conversations (Form A) and sessions (Form B): messages, idle expiry, pagination.
import { randomBytes, randomUUID } from 'node:crypto';
import type { ApiForm, ConversationSnapshot, StoredMessage } from './types.js';

const API_FORMS: readonly ApiForm[] = ['a', 'b', 'chat-completions', 'responses'];

export interface Conversation {
  id: string;
  form: ApiForm;
  botId: string;
  createdAt: number;
  updatedAt: number;
  /** Forced by expire(): the next use answers "expired" (B) / "unknown" (A). */
  expired: boolean;
  messages: StoredMessage[];
}

export type Lookup = { kind: 'ok'; conv: Conversation } | { kind: 'unknown' } | { kind: 'expired' };

export const newConversationId = () => `conv_${randomBytes(8).toString('hex')}`;
export const newMessageId = () => `msg_${randomBytes(8).toString('hex')}`;
export const newSessionId = () => randomUUID();

export interface SummaryA {
  id: string;
  preview: string;
  messageCount: number;
  createdAt: string;
  updatedAt: string;
}

export interface SummaryB {
  session_id: string;
  bot_id: string;
  preview: string;
  message_count: number;
  created_at: string;
  updated_at: string;
}

const iso = (ms: number) => new Date(ms).toISOString();
const PREVIEW_CHARS = 80;

function preview(conv: Conversation): string {
  const last = conv.messages[conv.messages.length - 1];
  if (!last) return '';
  const cps = Array.from(last.content);
  return cps.length > PREVIEW_CHARS ? `${cps.slice(0, PREVIEW_CHARS - 1).join('')}…` : last.content;
}

export class EmulatorConversations {
  private readonly convs = new Map<string, Conversation>();

  constructor(
    private readonly now: () => number,
    private readonly idleSeconds: () => number,
  ) {}

  private idle(conv: Conversation): boolean {
    return conv.expired || this.now() - conv.updatedAt > this.idleSeconds() * 1000;
  }

  /** Finds a conversation of a form; an idle or expired one is forgotten and reported as expired. */
  lookup(form: ApiForm, id: string): Lookup {
    const conv = this.convs.get(key(form, id));
    if (!conv) return { kind: 'unknown' };
    if (this.idle(conv)) {
      this.convs.delete(key(form, id));
      return { kind: 'expired' };
    }
    return { kind: 'ok', conv };
  }

  create(form: ApiForm, botId: string, id: string): Conversation {
    const at = this.now();
    const conv: Conversation = { id, form, botId, createdAt: at, updatedAt: at, expired: false, messages: [] };
    this.convs.set(key(form, id), conv);
    return conv;
  }

  /** Responses: one conversation answers to each of its response ids (previous_response_id). */
  alias(conv: Conversation, id: string): void {
    this.convs.set(key(conv.form, id), conv);
  }

  addMessage(conv: Conversation, role: 'user' | 'assistant', content: string, metadata?: unknown): StoredMessage {
    const at = this.now();
    const msg: StoredMessage = { id: newMessageId(), role, content, timestamp: iso(at) };
    if (metadata !== undefined) msg.metadata = metadata;
    conv.messages.push(msg);
    conv.updatedAt = at;
    return msg;
  }

  /** Marks a conversation/session of either form expired. */
  expire(id: string): boolean {
    let found = false;
    for (const form of API_FORMS) {
      const conv = this.convs.get(key(form, id));
      if (conv) {
        conv.expired = true;
        found = true;
      }
    }
    return found;
  }

  snapshot(id: string): ConversationSnapshot | undefined {
    const conv = API_FORMS.map((f) => this.convs.get(key(f, id))).find((c) => c !== undefined);
    if (!conv) return undefined;
    const { expired: _expired, messages, ...rest } = conv;
    return { ...rest, messages: messages.map((m) => ({ ...m })) };
  }

  clear(): void {
    this.convs.clear();
  }

  /** Live (not idle, not expired) conversations of a form, most recently updated first. */
  private live(form: 'a' | 'b', botId: string | undefined): Conversation[] {
    return [...this.convs.values()]
      .filter((c) => c.form === form && (botId === undefined || c.botId === botId) && !this.idle(c))
      .sort((x, y) => y.updatedAt - x.updatedAt || (x.id < y.id ? -1 : 1));
  }

  /** A4: page/limit pagination, `since` (ms) keeps conversations updated after it. */
  listA(botId: string, page: number, limit: number, since: number | undefined) {
    const all = this.live('a', botId).filter((c) => since === undefined || c.updatedAt > since);
    const from = (page - 1) * limit;
    const conversations: SummaryA[] = all.slice(from, from + limit).map((c) => ({
      id: c.id,
      preview: preview(c),
      messageCount: c.messages.length,
      createdAt: iso(c.createdAt),
      updatedAt: iso(c.updatedAt),
    }));
    return { conversations, pagination: { page, limit, total: all.length, hasMore: from + limit < all.length } };
  }

  /** B4: the `limit` most recently updated sessions (of a bot when given). */
  listB(botId: string | undefined, limit: number) {
    const all = this.live('b', botId);
    const conversations: SummaryB[] = all.slice(0, limit).map((c) => ({
      session_id: c.id,
      bot_id: c.botId,
      preview: preview(c),
      message_count: c.messages.length,
      created_at: iso(c.createdAt),
      updated_at: iso(c.updatedAt),
    }));
    return { conversations, has_more: all.length > limit };
  }
}

export type HistoryWindow = { ok: true; messages: StoredMessage[]; hasMore: boolean } | { ok: false; reason: string };

/**
 * B3 window: without a cursor the latest `limit` messages; `before` the `limit` messages just
 * before that id; `after` the `limit` messages just after it. Always in chronological order.
 * `hasMore` says whether more messages lie beyond the window in the direction of paging.
 */
export function historyWindow(
  messages: StoredMessage[],
  limit: number,
  before: string | undefined,
  after: string | undefined,
): HistoryWindow {
  let lo = 0;
  let hi = messages.length;
  if (before !== undefined) {
    const i = messages.findIndex((m) => m.id === before);
    if (i < 0) return { ok: false, reason: `unknown message id in before: ${before}` };
    hi = i;
  }
  if (after !== undefined) {
    const i = messages.findIndex((m) => m.id === after);
    if (i < 0) return { ok: false, reason: `unknown message id in after: ${after}` };
    lo = i + 1;
  }
  if (hi < lo) return { ok: true, messages: [], hasMore: false };
  if (after !== undefined && before === undefined) {
    return { ok: true, messages: messages.slice(lo, lo + limit), hasMore: lo + limit < hi };
  }
  const from = Math.max(lo, hi - limit);
  return { ok: true, messages: messages.slice(from, hi), hasMore: from > lo };
}

function key(form: ApiForm, id: string): string {
  return `${form}:${id}`;
}
