import { randomUUID } from 'node:crypto';
import {
  ChatError,
  type ChatService,
  type ChatStream,
  type ConversationList,
  type HistoryOptions,
  type HistoryPage,
  type SendRequest,
  type SendResult,
  type StreamEvent,
} from '../core/chat-port.js';
import type { TranscriptBounds, TranscriptStore, TranscriptTurn } from '../core/store-ports.js';
import { type Logger, silentLogger } from '../logger.js';
import { isObject } from './event-rules.js';
import { type UpstreamClientOptions, UpstreamHttp } from './http.js';
import { memoryTranscripts } from './memory-transcripts.js';
import {
  contentText,
  contextMessages,
  noConversationList,
  type OpenAiMessage,
  openAiBaseUrl,
  openAiErrorKind,
  withExtra,
} from './openai-common.js';
import { notChatApi } from './mapping.js';

// OpenAI Chat Completions (`POST {base}/v1/chat/completions`): stateless, so the bridge sends the
// conversation. Its turns are kept in a TranscriptStore under a conversation id the bridge mints
// (idsFromReplies false): the user's message as sent, and the reply as the user saw it, recorded
// when the reply ends (whole, capped, stopped or cut: the text that arrived). A reply that failed
// before any text records nothing, so the user's retry is not sent twice. The stream is read by the
// shared decoders (`choices[0].delta.content` is text; reasoning and tool-call arguments are not).

export const DEFAULT_TRANSCRIPT_BOUNDS: TranscriptBounds = { maxTurns: 40, maxChars: 24_000 };
const ENDPOINT_STREAM = 'chat completions stream';
const ENDPOINT_SEND = 'chat completions';
/** A context window refused: the transcript is halved (oldest dropped) at most this often. */
const MAX_SHORTENINGS = 3;

export class ChatCompletionsService implements ChatService {
  readonly flavor = 'chat-completions';
  readonly capabilities = { idsFromReplies: false };
  private readonly http: UpstreamHttp;
  private readonly transcripts: TranscriptStore;
  private readonly bounds: TranscriptBounds;
  private readonly log: Logger;

  constructor(private readonly opts: UpstreamClientOptions) {
    this.http = new UpstreamHttp({ ...opts, url: openAiBaseUrl(opts.url) });
    this.transcripts = opts.openAi?.transcripts ?? memoryTranscripts();
    this.bounds = opts.openAi?.transcript ?? DEFAULT_TRANSCRIPT_BOUNDS;
    this.log = opts.logger ?? silentLogger;
  }

  mintConversationId(): string {
    return randomUUID();
  }

  async send(req: SendRequest): Promise<SendResult> {
    const res = await this.withShorterHistory(req, async (messages) =>
      this.http.json({
        method: 'POST',
        path: '/chat/completions',
        body: this.body(req, messages, false),
        endpoint: ENDPOINT_SEND,
        conversationSent: false,
        signal: req.signal,
        reply: true,
      }),
    );
    const text = res.tooLong === true ? '' : completionText(res.body);
    const result = this.http.boundReply({ text }, res.tooLong === true);
    if (req.conversationId !== undefined) result.conversationId = req.conversationId;
    await this.record(req, result.text);
    return result;
  }

  async stream(req: SendRequest): Promise<ChatStream> {
    const stream = await this.withShorterHistory(req, (messages) =>
      this.http.stream({
        method: 'POST',
        path: '/chat/completions',
        body: this.body(req, messages, true),
        endpoint: ENDPOINT_STREAM,
        conversationSent: false,
        signal: req.signal,
      }),
    );
    return recording(stream, (text) => this.record(req, text));
  }

  /** The stored transcript, as the page shows a conversation (there is no history endpoint). */
  async history(_botId: string, conversationId: string, opts: HistoryOptions = {}): Promise<HistoryPage> {
    const turns = await this.transcripts.turns(conversationId);
    const messages = turns.map((t, i) => ({
      id: `${conversationId}-${i}`,
      role: t.role,
      content: t.text,
      timestamp: new Date(t.at).toISOString(),
    }));
    const limit = opts.limit ?? messages.length;
    return { conversationId, messages: messages.slice(-limit), messageCount: messages.length };
  }

  listConversations(): Promise<ConversationList> {
    return noConversationList('Chat Completions');
  }

  close(): Promise<void> {
    return this.http.close();
  }

  /**
   * One call with the conversation so far; when the server says the whole is over its context
   * window, again with the newer half of the earlier turns (the user's message is never cut).
   */
  private async withShorterHistory<T>(req: SendRequest, call: (messages: OpenAiMessage[]) => Promise<T>): Promise<T> {
    let turns = req.conversationId === undefined ? [] : await this.transcripts.turns(req.conversationId);
    for (let n = 0; ; n++) {
      try {
        return await call(this.messages(req, turns));
      } catch (err) {
        const mapped = openAiErrorKind(err, false);
        if (!(mapped instanceof ChatError) || mapped.kind !== 'too_long' || turns.length === 0 || n >= MAX_SHORTENINGS)
          throw mapped;
        turns = startAtUser(turns.slice(Math.ceil(turns.length / 2)));
        this.log.info(
          { kept: turns.length },
          'upstream refused the conversation as too long; sending fewer earlier turns',
        );
      }
    }
  }

  private messages(req: SendRequest, turns: readonly TranscriptTurn[]): OpenAiMessage[] {
    const system = this.opts.openAi?.systemPrompt;
    return [
      ...(system !== undefined ? [{ role: 'system' as const, content: system }] : []),
      ...turns.map((t) => ({ role: t.role, content: t.text })),
      ...contextMessages(req),
      { role: 'user', content: req.message },
    ];
  }

  private body(req: SendRequest, messages: OpenAiMessage[], stream: boolean): Record<string, unknown> {
    return withExtra(this.opts.openAi?.requestExtra, { model: req.botId, messages, stream });
  }

  /** The turn as the user saw it; a failed store write is logged, never the reply's failure. */
  private async record(req: SendRequest, replyText: string): Promise<void> {
    if (req.conversationId === undefined || replyText === '') return;
    const at = Date.now();
    const turns: TranscriptTurn[] = [
      ...contextMessages(req).map((m) => ({
        role: m.role === 'assistant' ? m.role : ('user' as const),
        text: m.content,
        at,
      })),
      { role: 'user', text: req.message, at },
      { role: 'assistant', text: replyText, at },
    ];
    try {
      await this.transcripts.append(req.conversationId, turns, this.bounds);
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not keep the conversation turn');
    }
  }
}

function startAtUser(turns: TranscriptTurn[]): TranscriptTurn[] {
  const first = turns.findIndex((t) => t.role === 'user');
  return first === -1 ? [] : turns.slice(first);
}

/** A one-response body: `choices[0].message.content` (reasoning fields are not the answer). */
function completionText(body: unknown): string {
  if (!isObject(body)) throw notChatApi(ENDPOINT_SEND, 'the answer is not a JSON object');
  if (!Array.isArray(body.choices)) {
    throw notChatApi(ENDPOINT_SEND, 'the answer has no "choices" list');
  }
  const choice: unknown = body.choices[0];
  const message = isObject(choice) && isObject(choice.message) ? choice.message : undefined;
  return contentText(message?.content) ?? '';
}

/**
 * The stream, with the text it yielded recorded once when it is finished, whichever way (the end,
 * a Stop, a cut). The record is awaited before the iterator completes, so the place's next turn
 * (which waits for this reply) reads it.
 */
function recording(stream: ChatStream, record: (text: string) => Promise<void>): ChatStream {
  let text = '';
  let recorded = false;
  async function* events(): AsyncGenerator<StreamEvent> {
    try {
      for await (const ev of stream) {
        if (ev.type === 'text') text += ev.text;
        yield ev;
      }
    } finally {
      if (!recorded) {
        recorded = true;
        await record(text);
      }
    }
  }
  const iterator = events();
  return {
    conversationId: stream.conversationId,
    cancel: () => stream.cancel(),
    [Symbol.asyncIterator]: () => iterator,
  };
}
