import { randomUUID } from 'node:crypto';
import type {
  ChatService,
  ChatStream,
  ConversationList,
  HistoryOptions,
  HistoryPage,
  ListOptions,
  SendRequest,
  SendResult,
} from '../core/chat-port.js';
import { firstString } from './event-rules.js';
import { messageCall, type UpstreamClientOptions, UpstreamHttp } from './http.js';
import {
  assignDefined,
  boolOf,
  messagesOf,
  numberOf,
  payload,
  requireList,
  sendResultOf,
  summariesOf,
} from './mapping.js';

// Form B: `{base_url}/v1/chat/…`, `bot_id` in the body or query, `session_id`. The client chooses
// session ids itself (a UUID), so it knows the id before the first reply.

export function sendBody(req: SendRequest): Record<string, unknown> {
  return {
    bot_id: req.botId,
    message: req.message,
    ...(req.conversationId !== undefined ? { session_id: req.conversationId } : {}),
    ...(req.metadata !== undefined ? { metadata: req.metadata } : {}),
  };
}

export class FormBService implements ChatService {
  readonly flavor = 'b';
  // Form B: the client names the session (mintConversationId) before the first send.
  readonly capabilities = { idsFromReplies: false };
  private readonly http: UpstreamHttp;

  constructor(opts: UpstreamClientOptions) {
    this.http = new UpstreamHttp(opts);
  }

  mintConversationId(): string {
    return randomUUID();
  }

  async send(req: SendRequest): Promise<SendResult> {
    const res = await this.http.json({ ...messageCall(req, '/v1/chat/send', sendBody(req), 'B1 send'), reply: true });
    const result = this.http.boundReply(sendResultOf(res.body, undefined), res.tooLong === true);
    // The service may not echo the session: it is the one that was sent.
    if (result.conversationId === undefined && req.conversationId !== undefined)
      result.conversationId = req.conversationId;
    return result;
  }

  stream(req: SendRequest): Promise<ChatStream> {
    return this.http.stream(messageCall(req, '/v1/chat/stream', sendBody(req), 'B2 stream'));
  }

  /** B3: `session_id` (required), `limit` (default 50), `before` / `after` (message ids). */
  async history(_botId: string, conversationId: string, opts: HistoryOptions = {}): Promise<HistoryPage> {
    const res = await this.http.json({
      method: 'GET',
      path: '/v1/chat/history',
      query: { session_id: conversationId, limit: opts.limit, before: opts.before, after: opts.after },
      endpoint: 'B3 history',
      conversationSent: true,
    });
    const data = payload(res.body);
    return assignDefined<HistoryPage>(
      {
        conversationId: firstString(data, ['session_id', 'sessionId', 'conversationId'], true) ?? conversationId,
        messages: messagesOf(requireList(data.messages, 'messages', 'B3 history')),
      },
      {
        createdAt: firstString(data, ['created_at', 'createdAt']),
        messageCount: numberOf(data, ['message_count', 'messageCount']),
        hasMore: boolOf(data, ['has_more', 'hasMore']),
      },
    );
  }

  /**
   * B4: `bot_id`, `limit`; `page` and `since` are sent when given (not documented for Form B).
   * The body gives no total: the pagination's `total` counts what is known so far.
   */
  async listConversations(botId: string, opts: ListOptions = {}): Promise<ConversationList> {
    const res = await this.http.json({
      method: 'GET',
      path: '/v1/chat/conversations',
      query: { bot_id: botId, limit: opts.limit, page: opts.page, since: opts.since },
      endpoint: 'B4 conversations',
      conversationSent: false,
    });
    const data = payload(res.body);
    const list: ConversationList = {
      conversations: summariesOf(requireList(data.conversations ?? data.sessions, 'conversations', 'B4 conversations')),
    };
    const hasMore = boolOf(data, ['has_more', 'hasMore']);
    if (hasMore !== undefined) {
      const page = opts.page ?? 1;
      const limit = opts.limit ?? list.conversations.length;
      list.pagination = {
        page,
        limit,
        total: numberOf(data, ['total']) ?? (page - 1) * limit + list.conversations.length,
        hasMore,
      };
    }
    return list;
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
