import {
  ChatError,
  type ChatService,
  type ChatStream,
  type ConversationList,
  type HistoryMessage,
  type HistoryOptions,
  type HistoryPage,
  type SendRequest,
  type SendResult,
} from '../core/chat-port.js';
import { firstString, isObject } from './event-rules.js';
import { type CallSpec, type UpstreamClientOptions, UpstreamHttp } from './http.js';
import { notChatApi } from './mapping.js';
import {
  contentText,
  contextMessages,
  noConversationList,
  openAiBaseUrl,
  openAiErrorKind,
  withExtra,
} from './openai-common.js';
import { SseDecoder } from './stream-reader.js';

// OpenAI Responses (`POST {base}/v1/responses`): the server keeps the conversation, and the last
// response's id continues it (`previous_response_id`). So the conversation id is the id of the
// latest response, named by the server in every reply (idsFromReplies): the core captures it each
// turn as the place's conversation. An unknown or expired previous response (400/404) is the
// conversation gone, and the core renews it with the place's context, as for a Form B session.

const enc = encodeURIComponent;
const ENDPOINT_STREAM = 'responses stream';
const ENDPOINT_SEND = 'responses';
const HISTORY_LIMIT = 100;

type Json = Record<string, unknown>;

export class ResponsesService implements ChatService {
  readonly flavor = 'responses';
  readonly capabilities = { idsFromReplies: true };
  private readonly http: UpstreamHttp;

  constructor(private readonly opts: UpstreamClientOptions) {
    this.http = new UpstreamHttp({ ...opts, url: openAiBaseUrl(opts.url) });
  }

  mintConversationId(): undefined {
    return undefined;
  }

  async send(req: SendRequest): Promise<SendResult> {
    const res = await this.call(req.conversationId !== undefined, () =>
      this.http.json({ ...this.spec(req, false, ENDPOINT_SEND), reply: true }),
    );
    if (res.tooLong === true) return this.http.boundReply({ text: '' }, true);
    const body = res.body;
    if (!isObject(body) || !Array.isArray(body.output))
      throw notChatApi(ENDPOINT_SEND, 'the answer has no "output" list');
    if (body.status === 'failed') {
      const err = isObject(body.error) ? body.error : {};
      throw new ChatError(
        'stream_error',
        `${ENDPOINT_SEND}: the response failed: ${firstString(err, ['message']) ?? ''}`,
        {
          endpoint: ENDPOINT_SEND,
          ...(firstString(err, ['code']) !== undefined ? { code: firstString(err, ['code']) as string } : {}),
        },
      );
    }
    const result = this.http.boundReply({ text: outputText(body.output) }, false);
    const id = firstString(body, ['id']);
    if (id !== undefined && id !== '') {
      result.conversationId = id;
      result.messageId = id;
    }
    return result;
  }

  stream(req: SendRequest): Promise<ChatStream> {
    return this.call(req.conversationId !== undefined, () =>
      // SSE whatever the content type a server names; read by the shared agent-event rules
      // (agent-events.ts: text, steps, sources, files), the response's id the conversation.
      this.http.stream({
        ...this.spec(req, true, ENDPOINT_STREAM),
        decoder: (o) => new SseDecoder({ ...o, responseIds: true }),
      }),
    );
  }

  /** The conversation up to a response: its input items (the earlier turns included), then its output. */
  async history(_botId: string, conversationId: string, opts: HistoryOptions = {}): Promise<HistoryPage> {
    const limit = Math.min(HISTORY_LIMIT, Math.max(1, opts.limit ?? HISTORY_LIMIT));
    const get = (path: string, query?: CallSpec['query']) =>
      this.call(true, () =>
        this.http.json({
          method: 'GET',
          path,
          endpoint: 'responses history',
          conversationSent: true,
          ...(query ? { query } : {}),
        }),
      );
    const items = await get(`/responses/${enc(conversationId)}/input_items`, { order: 'asc', limit });
    const response = await get(`/responses/${enc(conversationId)}`);
    const inputs = isObject(items.body) && Array.isArray(items.body.data) ? items.body.data : [];
    const messages = [...messagesOf(inputs)];
    const output = isObject(response.body) && Array.isArray(response.body.output) ? response.body.output : [];
    const reply = outputText(output);
    if (reply !== '') messages.push({ id: conversationId, role: 'assistant', content: reply });
    const page: HistoryPage = { conversationId, messages: messages.slice(-limit) };
    if (isObject(items.body) && typeof items.body.has_more === 'boolean') page.hasMore = items.body.has_more;
    return page;
  }

  listConversations(): Promise<ConversationList> {
    return noConversationList('Responses');
  }

  close(): Promise<void> {
    return this.http.close();
  }

  /** `previousSent`: the call named a previous response (its 404 is the conversation gone). */
  private async call<T>(previousSent: boolean, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw openAiErrorKind(err, previousSent);
    }
  }

  private spec(req: SendRequest, stream: boolean, endpoint: string): CallSpec {
    const context = contextMessages(req);
    const input = context.length === 0 ? req.message : [...context, { role: 'user', content: req.message }];
    const system = this.opts.openAi?.systemPrompt;
    const own: Json = {
      model: req.botId,
      input,
      stream,
      // Instructions are not carried over from a previous response: sent every turn.
      ...(system !== undefined ? { instructions: system } : {}),
      ...(req.conversationId !== undefined ? { previous_response_id: req.conversationId } : {}),
    };
    return {
      method: 'POST',
      path: '/responses',
      body: withExtra(this.opts.openAi?.requestExtra, own),
      endpoint,
      conversationSent: req.conversationId !== undefined,
      signal: req.signal,
    };
  }
}

/** The answer of a response's output: its messages' text (reasoning and tool items are not). */
function outputText(output: unknown[]): string {
  return output
    .filter(isObject)
    .filter((item) => item.type === 'message')
    .map((item) => contentText(Array.isArray(item.content) ? item.content.map(refusalAsText) : item.content) ?? '')
    .join('');
}

const refusalAsText = (part: unknown): unknown =>
  isObject(part) && part.type === 'refusal'
    ? { type: 'output_text', text: firstString(part, ['refusal']) ?? '' }
    : part;

function messagesOf(items: unknown[]): HistoryMessage[] {
  const out: HistoryMessage[] = [];
  items.filter(isObject).forEach((item, i) => {
    if (item.type !== undefined && item.type !== 'message') return;
    const role = firstString(item, ['role']);
    if (role !== 'user' && role !== 'assistant') return;
    const text = contentText(Array.isArray(item.content) ? item.content.map(refusalAsText) : item.content);
    if (text === undefined) return;
    out.push({ id: firstString(item, ['id']) ?? `item-${i}`, role, content: text });
  });
  return out;
}
