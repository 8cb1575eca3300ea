import type { Logger } from 'pino';
import { type ChatMetadata, ChatError, type ChatService, type ChatStream, type SendRequest } from '../chat-port.js';
import type { Conversations, ConversationUse } from './conversations.js';
import type { BridgeMetrics } from '../metrics-port.js';
import type { Clock, FeedbackStore, FeedbackVote, IncomingMessage, InFlightStore } from '../ports.js';
import type { ThreadContext } from './thread-context.js';
import {
  chatMetadata,
  type ComposedMessage,
  composeMessage,
  feedbackNotes,
  fewerContext,
  pendingVotes,
} from './upstream-message.js';
import { MESSAGES } from '../user-messages.js';
import { AgentWork, type AgentWorkSettings } from './agent-work.js';

// What one reply asks the upstream and reads back: the composed message (the user's words, and
// for a new conversation in a place with earlier messages that history as context), the user's
// votes not yet sent, and the call (stream, or send). Two retries happen here, both before any
// text: with less context when the upstream refuses the message as too long, and once in a
// renewed conversation when the upstream forgot the old one. The upstream client already retried
// everything else.

export interface UpstreamDeps {
  chat: ChatService;
  conversations: Conversations;
  inflight: InFlightStore;
  metrics: BridgeMetrics;
  clock: Clock;
  streaming: boolean;
  /** Reads a place's earlier messages for a new conversation (CONTEXT_*); absent: no context. */
  context?: ThreadContext;
  /** CHAT_MAX_MESSAGE_CHARS: the composed message (context and the user's words) must fit. */
  maxMessageChars?: number;
  /** CHAT_REPLY_MAX_CHARS: only for the notice; the upstream client enforces the cap. */
  replyMaxChars?: number;
  /** Called once, the moment the upstream request has ended (its slot can go to the next message). */
  onUpstreamEnd?: () => void;
  /** FEEDBACK: votes are stored here, and pending ones go upstream with the voter's next message. */
  feedback?: { store: FeedbackStore | undefined; show: boolean };
  hooks?: ReplyHooks;
  /** SHOW_STEPS, SHOW_SOURCES: which of an agent's work the reply shows. Absent: both. */
  agent?: AgentWorkSettings;
}

/** Timing taps for tests and benchmarks. */
export interface ReplyHooks {
  onFirstToken?(eventId: string, at: number): void;
  onFirstText?(eventId: string, at: number): void;
}

/** The one message being answered, and where its bookkeeping goes. */
export interface UpstreamAsk {
  msg: IncomingMessage;
  text: string;
  botId: string;
  /** The reply's in-flight record. */
  recId: number;
  /** Queues a bookkeeping write off the reply's path (reply-to.ts laterWrites). */
  record: (what: string, fn: () => Promise<unknown>) => void;
  log: Logger;
}

export class UpstreamReply {
  /** The reply's conversation as known now (the id the upstream named, or the renewed one). */
  conv: ConversationUse;
  /** The upstream ended the reply at its character cap. */
  private capped = false;
  /** The upstream's id of its reply, when it names one (for the votes on it). */
  replyMessageId: string | undefined;
  private renewed: boolean;
  /** The message sent carried earlier messages as context. */
  private carried = false;
  private gotText = false;
  private composed: ComposedMessage;
  private contextRead = false;
  private readonly upstream = new AbortController();
  private current: ChatStream | undefined;
  /** The agent's steps, sources and files the upstream sent beside the text. */
  readonly work: AgentWork;

  constructor(
    private readonly deps: UpstreamDeps,
    private readonly ask: UpstreamAsk,
    conv: ConversationUse,
  ) {
    this.conv = conv;
    this.renewed = conv.renewed;
    this.composed = this.compose();
    this.work = new AgentWork(deps.agent ?? { steps: true, sources: true });
  }

  /** Put before the reply's text: the note that its conversation is a new one. */
  prefix(): string {
    return this.renewed ? (this.carried ? MESSAGES.renewedWithContext : MESSAGES.renewed) : '';
  }

  /**
   * The reply's text as it arrives; when this ends, so has the upstream request. It returns the
   * note the reply ends with, if any (the upstream stopped at the character cap).
   */
  async *deltas(): AsyncGenerator<string, string | undefined> {
    try {
      yield* this.attempts();
    } finally {
      this.deps.onUpstreamEnd?.();
    }
    if (!this.capped) return undefined;
    const chars = this.deps.replyMaxChars;
    this.ask.log.warn({ chars }, 'reply passed its character cap; upstream request aborted');
    return MESSAGES.replyTooLong(chars);
  }

  /** Stop reading early: the request aborted, and a stream being read cancelled. */
  cancel(): void {
    this.upstream.abort();
    this.current?.cancel();
  }

  /** Make sure the request is gone (a limit ended the reply). */
  abortRequest(): void {
    this.upstream.abort();
  }

  private async *attempts(): AsyncGenerator<string> {
    let renewedOnce = false;
    let shortened = false;
    for (;;) {
      await this.readContext();
      this.carried = this.composed.included.length > 0;
      const { msg, log } = this.ask;
      const votes = await pendingVotes(this.deps.feedback?.store, this.conv.conversationId, msg.userId, log);
      const req = this.request(votes);
      try {
        if (!this.deps.streaming || this.conv.useSend) yield* this.sendOnce(req, votes);
        else yield* this.streamOnce(req, votes);
        return;
      } catch (err) {
        if (!shortened && !this.gotText && err instanceof ChatError && err.kind === 'too_long' && this.carried) {
          shortened = true;
          this.shorten();
          continue;
        }
        if (!renewedOnce && !this.gotText && err instanceof ChatError && err.kind === 'conversation_gone') {
          renewedOnce = true;
          await this.renew();
          continue;
        }
        throw err;
      } finally {
        this.current?.cancel();
        this.current = undefined;
      }
    }
  }

  // What is sent: the user's words, and for a new conversation in a place with earlier messages
  // (mentioned midway through a thread, renewed) that history as context; none after a reset.
  private compose(context: ChatMetadata['context'] = []): ComposedMessage {
    const { context: reader, maxMessageChars } = this.deps;
    return composeMessage({
      userText: this.ask.text,
      context,
      mode: reader?.settings.mode ?? 'off',
      maxContextChars: reader?.settings.maxChars ?? 0,
      ...(maxMessageChars !== undefined ? { maxMessageChars } : {}),
    });
  }

  private async readContext(): Promise<void> {
    const { conv } = this;
    if (!conv.fresh || conv.afterReset || this.contextRead || this.deps.context === undefined) return;
    this.contextRead = true;
    this.composed = this.compose(await this.deps.context.load(this.ask.msg, this.ask.log));
  }

  /** The upstream's own limit is unknown here: half the context (oldest first) may fit. */
  private shorten(): void {
    // The user's words are never cut; a second refusal is the user's to see.
    this.composed = this.compose(fewerContext(this.composed.included));
    this.ask.log.info(
      { kept: this.composed.included.length },
      'upstream refused the message as too long; retrying with less context',
    );
  }

  /** The upstream forgot the conversation: the reply goes on in a new one. */
  private async renew(): Promise<void> {
    const { msg, botId, record, recId } = this.ask;
    this.conv = await this.deps.conversations.renew(msg.place, botId);
    this.renewed = true;
    const renewedId = this.conv.conversationId;
    if (renewedId !== undefined)
      record('recording the conversation id', () => this.deps.inflight.setUpstreamId(recId, renewedId));
  }

  private request(votes: FeedbackVote[]): SendRequest {
    const req: SendRequest = {
      botId: this.ask.botId,
      message: this.composed.message,
      metadata: {
        ...chatMetadata(this.ask.msg),
        ...this.composed.metadata,
        ...(votes.length > 0 ? { feedback: feedbackNotes(votes) } : {}),
      },
      signal: this.upstream.signal,
    };
    if (this.conv.conversationId !== undefined) req.conversationId = this.conv.conversationId;
    return req;
  }

  private async *sendOnce(req: SendRequest, votes: FeedbackVote[]): AsyncGenerator<string> {
    const res = await this.deps.chat.send(req);
    this.delivered(votes);
    this.capture(res.conversationId);
    if (res.messageId !== undefined) this.replyMessageId = res.messageId;
    if (res.endReason === 'too_long') this.capped = true;
    if (res.text !== '') {
      this.firstToken();
      yield res.text;
    }
  }

  private async *streamOnce(req: SendRequest, votes: FeedbackVote[]): AsyncGenerator<string> {
    const { chat, conversations } = this.deps;
    const stream = await chat.stream(req);
    this.delivered(votes);
    this.current = stream;
    this.capture(stream.conversationId);
    let named = stream.conversationId !== undefined;
    for await (const ev of stream) {
      if (ev.type === 'text') {
        if (ev.text === '') continue;
        this.firstToken();
        yield ev.text;
      } else if (ev.type === 'ids') {
        if (ev.messageId !== undefined) this.replyMessageId = ev.messageId;
        if (ev.conversationId !== undefined) named = true;
        this.capture(ev.conversationId);
      } else if (ev.type === 'end') {
        if (ev.reason === 'too_long') this.capped = true;
        break;
      } else if (ev.type === 'step') this.work.step(ev.step);
      else if (ev.type === 'source') this.work.source(ev.source);
      else if (ev.type === 'file') this.work.file(ev.file);
    }
    if (this.conv.fresh && chat.capabilities.idsFromReplies && !named) conversations.noIdFromStream();
  }

  /** The votes went with a message the upstream took: they count as delivered. */
  private delivered(votes: FeedbackVote[]): void {
    const store = this.deps.feedback?.store;
    if (votes.length === 0 || store === undefined) return;
    this.ask.record('marking feedback as delivered', () => store.delivered(votes, this.deps.clock.now()));
  }

  /** The upstream named the reply's conversation: kept for the place's next message. */
  private capture(id: string | undefined): void {
    const { chat, conversations, inflight } = this.deps;
    if (id === undefined || id === '' || !chat.capabilities.idsFromReplies || id === this.conv.conversationId) return;
    this.conv = { ...this.conv, conversationId: id };
    const { msg, botId, recId } = this.ask;
    this.ask.record('recording the conversation id', async () => {
      await conversations.captured(msg.place, botId, id);
      await inflight.setUpstreamId(recId, id);
    });
  }

  private firstToken(): void {
    if (this.gotText) return;
    this.gotText = true;
    const { msg } = this.ask;
    const at = this.deps.clock.now();
    this.deps.metrics.upstreamFirstToken(msg.place.platform, Math.max(0, at - msg.receivedAt) / 1000);
    this.deps.hooks?.onFirstToken?.(msg.eventId, at);
  }
}
