import { monospaceTableStream } from './table-stream.js';
import type { Logger } from 'pino';
import { attachmentInfo } from './attachments.js';
import {
  type ChatMetadata,
  ChatError,
  type ChatService,
  type ChatStream,
  type FeedbackNote,
  type SendRequest,
} from './chat-port.js';
import type { Conversations, ConversationTurn } from './conversations.js';
import type { BridgeMetrics } from './metrics-port.js';
import type { Clock, FeedbackStore, FeedbackVote, IncomingMessage, InFlightBegin, InFlightStore } from './ports.js';
import { placeKey } from './ports.js';
import { laterWrites } from './later-writes.js';
import { pump } from './pump.js';
import type { WriteScheduler } from './scheduler.js';
import type { ThreadContext } from './thread-context.js';
import { type ComposedMessage, composeMessage, fewerContext } from './upstream-message.js';
import { describeChatError, MESSAGES, NOTE_RESERVE } from './user-messages.js';

// One user message answered: the conversation, the in-flight record (written before the upstream
// call, so a crash can be repaired), the upstream call (stream, or send), and the pump to the
// reply sink. The only retry here is the one renewal of a conversation the upstream forgot; the
// upstream client already retried everything else.

export interface TurnDeps {
  chat: ChatService;
  conversations: Conversations;
  inflight: InFlightStore;
  metrics: BridgeMetrics;
  logger: Logger;
  clock: Clock;
  scheduler: WriteScheduler;
  streaming: boolean;
  editIntervalMs: number;
  /** CHAT_REPLY_MAX_SECONDS in ms: past it the upstream request is aborted and the reply ends. */
  replyMaxMs?: number;
  /** CHAT_REPLY_MAX_CHARS: only for the notice; the upstream client enforces the cap. */
  replyMaxChars?: number;
  /** Reads a place's earlier messages for a new conversation (CONTEXT_*); absent: no context. */
  context?: ThreadContext;
  /** CHAT_MAX_MESSAGE_CHARS: the composed message (context and the user's words) must fit. */
  maxMessageChars?: number;
  /** Called once, the moment the upstream request has ended (its slot can go to the next message). */
  onUpstreamEnd?: () => void;
  /** The reply's key, for the sink's Stop and feedback controls (WriteOptions.replyKey). */
  replyKey?: string;
  /** The asker stopped the reply: it ends like a limit, with the text so far and MESSAGES.stopped. */
  stop?: AbortSignal;
  /** FEEDBACK: votes are stored here, and pending ones go upstream with the voter's next message. */
  feedback?: { store: FeedbackStore | undefined; show: boolean };
  hooks?: TurnHooks;
  /** REPLICA_ID: recorded as the owner of the reply, so crash repair knows whose it is. */
  owner?: string;
}

/** Timing taps for tests and benchmarks. */
export interface TurnHooks {
  onFirstToken?(eventId: string, at: number): void;
  onFirstText?(eventId: string, at: number): void;
}

export type TurnStatus = 'answered' | 'interrupted' | 'failed';

function feedbackNotes(votes: FeedbackVote[]): FeedbackNote[] {
  return votes.map((v) => ({ messageId: v.messageId, vote: v.vote, at: new Date(v.at).toISOString() }));
}

/** The upstream's `metadata`: where the message was written (its origin) and by whom. */
export function chatMetadata(msg: IncomingMessage): ChatMetadata {
  const { origin } = msg;
  const md: ChatMetadata = { source: origin.platform };
  if (origin.workspaceId !== undefined) md.workspaceId = origin.workspaceId;
  md.channelId = origin.channelId;
  if (origin.threadId !== undefined) md.threadId = origin.threadId;
  md.userId = msg.userId;
  if (msg.userName !== undefined) md.userName = msg.userName;
  md.messageId = msg.messageId;
  if (msg.forwarded === true) md.forwarded = true;
  const files = attachmentInfo(msg.attachments ?? []);
  if (files.length > 0) md.attachments = files;
  return md;
}

export async function runTurn(
  deps: TurnDeps,
  msg: IncomingMessage,
  text: string,
  botId: string,
  signal: AbortSignal,
): Promise<TurnStatus> {
  const { chat, conversations, inflight, metrics, clock } = deps;
  const platform = msg.place.platform;
  const log = deps.logger.child({ platform, eventId: msg.eventId });
  metrics.replyStarted(platform);

  let conv: ConversationTurn = await conversations.begin(msg.place, botId);
  let renewed = conv.renewed;
  const begin: InFlightBegin = {
    platform,
    eventId: msg.eventId,
    target: msg.sink.target,
    at: clock.now(),
    ...(deps.owner !== undefined ? { owner: deps.owner } : {}),
  };
  if (conv.conversationId !== undefined) begin.upstreamId = conv.conversationId;
  const recId = await inflight.begin(begin);
  // The reply's bookkeeping, in order and off its path (see laterWrites).
  const record = laterWrites(log);

  const upstream = new AbortController();
  let current: ChatStream | undefined;
  let gotText = false;
  const capture = (id: string | undefined) => {
    if (id === undefined || id === '' || !chat.capabilities.idsFromReplies || id === conv.conversationId) return;
    conv = { ...conv, conversationId: id };
    record('recording the conversation id', async () => {
      await conversations.captured(msg.place, botId, id);
      await inflight.setUpstreamId(recId, id);
    });
  };
  /** The upstream's id of its reply, when it names one (for the votes on it). */
  let replyMessageId: string | undefined;
  const firstToken = () => {
    if (gotText) return;
    gotText = true;
    const at = clock.now();
    metrics.upstreamFirstToken(platform, Math.max(0, at - msg.receivedAt) / 1000);
    deps.hooks?.onFirstToken?.(msg.eventId, at);
  };

  // The reply's own limits: a deadline the upstream cannot stretch, and the reader's char cap.
  const limit = new AbortController();
  let capped = false;
  const maxMs = deps.replyMaxMs;
  const deadline =
    maxMs === undefined
      ? undefined
      : clock.setTimeout(() => {
          log.warn({ seconds: maxMs / 1000 }, 'reply passed its deadline; upstream request aborted');
          limit.abort(MESSAGES.replyDeadline(Math.round(maxMs / 1000)));
        }, maxMs);
  // The asker's Stop ends the reply the same way as the deadline: upstream aborted, text kept.
  const onStop = () => {
    if (!limit.signal.aborted) limit.abort(MESSAGES.stopped);
  };
  if (deps.stop?.aborted) onStop();
  deps.stop?.addEventListener('abort', onStop, { once: true });

  // The user's votes in this conversation not yet sent: they go with this message, and count as
  // delivered once the upstream took it.
  const feedbackStore = deps.feedback?.store;
  const pendingVotes = async (): Promise<FeedbackVote[]> => {
    if (feedbackStore === undefined || conv.conversationId === undefined) return [];
    try {
      return await feedbackStore.pending(conv.conversationId, msg.userId);
    } catch (err) {
      log.warn({ err: err instanceof Error ? err.message : String(err) }, 'reading pending feedback failed');
      return [];
    }
  };
  const delivered = (votes: FeedbackVote[]) => {
    if (votes.length === 0 || feedbackStore === undefined) return;
    record('marking feedback as delivered', () => feedbackStore.delivered(votes, clock.now()));
  };

  async function* deltas(): AsyncGenerator<string> {
    try {
      yield* upstreamDeltas();
    } finally {
      deps.onUpstreamEnd?.();
    }
  }

  // What is sent: the user's words, and for a new conversation in a place with earlier messages
  // (mentioned midway through a thread, renewed) that history as context; none after a reset.
  const compose = (context: ChatMetadata['context'] = []): ComposedMessage =>
    composeMessage({
      userText: text,
      context,
      mode: deps.context?.settings.mode ?? 'off',
      maxContextChars: deps.context?.settings.maxChars ?? 0,
      ...(deps.maxMessageChars !== undefined ? { maxMessageChars: deps.maxMessageChars } : {}),
    });
  let composed = compose();
  let contextRead = false;
  let carried = false;

  async function* upstreamDeltas(): AsyncGenerator<string> {
    let renewedOnce = false;
    let shortened = false;
    for (;;) {
      if (conv.fresh && !conv.afterReset && !contextRead && deps.context !== undefined) {
        contextRead = true;
        composed = compose(await deps.context.load(msg, log));
      }
      carried = composed.included.length > 0;
      const votes = await pendingVotes();
      const req: SendRequest = {
        botId,
        message: composed.message,
        metadata: {
          ...chatMetadata(msg),
          ...composed.metadata,
          ...(votes.length > 0 ? { feedback: feedbackNotes(votes) } : {}),
        },
        signal: upstream.signal,
      };
      if (conv.conversationId !== undefined) req.conversationId = conv.conversationId;
      try {
        if (!deps.streaming || conv.useSend) {
          const res = await chat.send(req);
          delivered(votes);
          capture(res.conversationId);
          if (res.messageId !== undefined) replyMessageId = res.messageId;
          if (res.endReason === 'too_long') capped = true;
          if (res.text !== '') {
            firstToken();
            yield res.text;
          }
          return;
        }
        const stream = await chat.stream(req);
        delivered(votes);
        current = stream;
        capture(stream.conversationId);
        let named = stream.conversationId !== undefined;
        for await (const ev of stream) {
          if (ev.type === 'text') {
            if (ev.text === '') continue;
            firstToken();
            yield ev.text;
          } else if (ev.type === 'ids') {
            if (ev.messageId !== undefined) replyMessageId = ev.messageId;
            if (ev.conversationId !== undefined) named = true;
            capture(ev.conversationId);
          } else {
            if (ev.reason === 'too_long') capped = true;
            break;
          }
        }
        if (conv.fresh && chat.capabilities.idsFromReplies && !named) conversations.noIdFromStream();
        return;
      } catch (err) {
        if (!shortened && !gotText && err instanceof ChatError && err.kind === 'too_long' && carried) {
          // The upstream's own limit is unknown here: half the context (oldest first) may fit.
          // The user's words are never cut; a second refusal is the user's to see.
          shortened = true;
          composed = compose(fewerContext(composed.included));
          log.info(
            { kept: composed.included.length },
            'upstream refused the message as too long; retrying with less context',
          );
          continue;
        }
        if (!renewedOnce && !gotText && err instanceof ChatError && err.kind === 'conversation_gone') {
          renewedOnce = true;
          conv = await conversations.renew(msg.place, botId);
          renewed = true;
          const renewedId = conv.conversationId;
          if (renewedId !== undefined)
            record('recording the conversation id', () => inflight.setUpstreamId(recId, renewedId));
          continue;
        }
        throw err;
      } finally {
        current?.cancel();
        current = undefined;
      }
    }
  }

  const tables = msg.sink.monospaceTables;
  const result = await pump(tables !== undefined ? monospaceTableStream(deltas(), tables) : deltas(), {
    sink: msg.sink,
    scheduler: deps.scheduler,
    clock,
    editIntervalMs: deps.editIntervalMs,
    platform,
    metrics,
    logger: log,
    progress: (ids, last) => record('recording reply progress', () => inflight.progress(recId, ids, last, clock.now())),
    prefix: () => (renewed ? (carried ? MESSAGES.renewedWithContext : MESSAGES.renewed) : ''),
    reserveChars: NOTE_RESERVE,
    receivedAt: msg.receivedAt,
    onFirstText: (at) => deps.hooks?.onFirstText?.(msg.eventId, at),
    signal,
    interruptedNote: MESSAGES.interrupted,
    describeError: describeChatError,
    emptyReplacement: MESSAGES.emptyReply,
    onStop: () => {
      upstream.abort();
      current?.cancel();
    },
    limit: limit.signal,
    ...(deps.replyKey !== undefined ? { replyKey: deps.replyKey } : {}),
    feedback: deps.feedback?.show === true && deps.replyKey !== undefined,
    endNote: () => {
      if (!capped) return undefined;
      log.warn({ chars: deps.replyMaxChars }, 'reply passed its character cap; upstream request aborted');
      return MESSAGES.replyTooLong(deps.replyMaxChars);
    },
  });
  deadline?.clear();
  deps.stop?.removeEventListener('abort', onStop);
  // A limit stopped the reply: make sure the upstream request is gone too.
  if (limit.signal.aborted) upstream.abort();
  const stopped = limit.signal.aborted && limit.signal.reason === MESSAGES.stopped;
  if (stopped) {
    log.info('reply stopped by its asker');
    metrics.replyStopped(platform);
  }
  // Votes on the reply need its conversation and id after the process forgot the reply.
  const lastMessage = result.messageIds.at(-1);
  if (
    result.outcome === 'done' &&
    deps.feedback?.show === true &&
    feedbackStore !== undefined &&
    deps.replyKey !== undefined &&
    lastMessage !== undefined
  ) {
    const replyKey = deps.replyKey;
    record('remembering a reply for feedback', () =>
      feedbackStore.rememberReply({
        replyKey,
        platform,
        placeKey: placeKey(msg.place),
        upstreamId: conv.conversationId,
        messageId: replyMessageId ?? lastMessage,
        at: clock.now(),
      }),
    );
  }

  if (result.sourceError !== undefined) logUpstreamError(log, metrics, result.sourceError, signal.aborted);
  // The place now holds this message and its reply: a cached history of it is out of date.
  if (result.outcome !== 'failed') deps.context?.changed(msg.place);
  record('recording the end of a reply', () =>
    inflight.finish(recId, result.outcome === 'done' ? 'done' : result.outcome, clock.now()),
  );
  await record.settled();
  if (result.outcome === 'done') {
    metrics.replyFinished(platform);
    return 'answered';
  }
  if (result.outcome === 'interrupted') {
    metrics.replyInterrupted(platform);
    return 'interrupted';
  }
  const reason = result.error !== undefined ? 'platform' : errorReason(result.sourceError);
  metrics.replyFailed(platform, reason);
  return 'failed';
}

function errorReason(err: unknown): string {
  return err instanceof ChatError ? err.kind : 'internal';
}

function logUpstreamError(log: Logger, metrics: BridgeMetrics, err: unknown, aborted: boolean): void {
  if (aborted) {
    log.info('reply interrupted by shutdown');
    return;
  }
  if (!(err instanceof ChatError)) {
    log.error({ err: err instanceof Error ? err.message : String(err) }, 'reply failed');
    return;
  }
  const { status, code, endpoint } = err.details;
  metrics.upstreamError(status !== undefined ? String(status) : err.kind, code ?? err.kind);
  const fields = { kind: err.kind, status, code, endpoint, reason: err.message };
  if (err.kind === 'unauthorized') log.error(fields, 'upstream refused our credentials');
  else if (err.kind === 'interrupted') log.warn(fields, 'upstream stream interrupted');
  else log.warn(fields, 'upstream error');
}
