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
import { isObject } from './event-rules.js';
import { header, messageCall, type UpstreamClientOptions, UpstreamHttp } from './http.js';
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

// Form A: `{base_url}/api/v1/chat/{botId}/…`, `conversationId`, a `{success, data}` envelope.
// The upstream assigns conversation ids; they come back in the reply.

const enc = encodeURIComponent;

export function messageBody(req: SendRequest): Record<string, unknown> {
  return {
    message: req.message,
    ...(req.conversationId !== undefined ? { conversationId: req.conversationId } : {}),
    ...(req.metadata !== undefined ? { metadata: req.metadata } : {}),
  };
}

export class FormAService implements ChatService {
  readonly flavor = 'a';
  // Form A names conversations in its replies (X-Conversation-Id, the ids event, the send result).
  readonly capabilities = { idsFromReplies: true };
  private readonly http: UpstreamHttp;

  constructor(opts: UpstreamClientOptions) {
    this.http = new UpstreamHttp(opts);
  }

  mintConversationId(): undefined {
    return undefined;
  }

  async send(req: SendRequest): Promise<SendResult> {
    const res = await this.http.json({
      ...messageCall(req, `/api/v1/chat/${enc(req.botId)}/message`, messageBody(req), 'A1 message'),
      reply: true,
    });
    return this.http.boundReply(sendResultOf(res.body, header(res.headers, 'x-conversation-id')), res.tooLong === true);
  }

  stream(req: SendRequest): Promise<ChatStream> {
    return this.http.stream(messageCall(req, `/api/v1/chat/${enc(req.botId)}/stream`, messageBody(req), 'A2 stream'));
  }

  /** A3. Form A documents no paging of one history: `opts` is not sent. */
  async history(botId: string, conversationId: string, _opts?: HistoryOptions): Promise<HistoryPage> {
    const res = await this.http.json({
      method: 'GET',
      path: `/api/v1/chat/${enc(botId)}/conversations/${enc(conversationId)}`,
      endpoint: 'A3 history',
      conversationSent: true,
    });
    const data = payload(res.body);
    const meta = isObject(data.metadata) ? data.metadata : {};
    return assignDefined<HistoryPage>(
      {
        conversationId: typeof data.conversationId === 'string' ? data.conversationId : conversationId,
        messages: messagesOf(requireList(data.messages, 'messages', 'A3 history')),
      },
      {
        createdAt: typeof meta.createdAt === 'string' ? meta.createdAt : undefined,
        messageCount: numberOf(meta, ['messageCount']),
        hasMore: boolOf(data, ['hasMore']),
      },
    );
  }

  /** A4: `page` (default 1), `limit` (default 20, at most 100), `since`. */
  async listConversations(botId: string, opts: ListOptions = {}): Promise<ConversationList> {
    const res = await this.http.json({
      method: 'GET',
      path: `/api/v1/chat/${enc(botId)}/conversations`,
      query: {
        page: opts.page,
        limit: opts.limit === undefined ? undefined : Math.min(100, Math.max(1, opts.limit)),
        since: opts.since,
      },
      endpoint: 'A4 conversations',
      conversationSent: false,
    });
    const data = payload(res.body);
    const list: ConversationList = {
      conversations: summariesOf(requireList(data.conversations, 'conversations', 'A4 conversations')),
    };
    const p = isObject(data.pagination) ? data.pagination : undefined;
    if (p) {
      list.pagination = {
        page: numberOf(p, ['page']) ?? opts.page ?? 1,
        limit: numberOf(p, ['limit']) ?? opts.limit ?? 20,
        total: numberOf(p, ['total']) ?? list.conversations.length,
        hasMore: boolOf(p, ['hasMore', 'has_more']) ?? false,
      };
    }
    return list;
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
