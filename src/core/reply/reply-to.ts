import { monospaceTableStream } from './table-stream.js';
import type { Logger } from 'pino';
import { ChatError } from '../chat-port.js';
import type { ConversationUse } from './conversations.js';
import type { LaterWrites } from './later-writes.js';
import type { BridgeMetrics } from '../metrics-port.js';
import type { IncomingMessage, InFlightBegin } from '../ports.js';
import { placeKey } from '../ports.js';
import { laterWrites } from './later-writes.js';
import { pump, type PumpResult } from './pump.js';
import type { WriteScheduler } from '../budget/scheduler.js';
import { type UpstreamDeps, UpstreamReply } from './upstream-reply.js';
import { describeChatError, MESSAGES, NOTE_RESERVE } from '../user-messages.js';

// One user message answered: the conversation, the in-flight record (written before the upstream
// call, so a crash can be repaired), the upstream call (upstream-reply.ts: what is asked and read
// back), the reply's limits (deadline, the asker's Stop), and the pump to the reply sink; then
// the bookkeeping of how the reply ended.

export interface ReplyDeps extends UpstreamDeps {
  logger: Logger;
  scheduler: WriteScheduler;
  editIntervalMs: number;
  /** CHAT_REPLY_MAX_SECONDS in ms: past it the upstream request is aborted and the reply ends. */
  replyMaxMs?: number;
  /** The reply's key, for the sink's Stop and feedback controls (WriteOptions.replyKey). */
  replyKey?: string;
  /** The asker stopped the reply: it ends like a limit, with the text so far and MESSAGES.stopped. */
  stop?: AbortSignal;
  /** REPLICA_ID: recorded as the owner of the reply, so crash repair knows whose it is. */
  owner?: string;
}

export type ReplyStatus = 'answered' | 'interrupted' | 'failed';

/** The reply and its bookkeeping, as the steps of one run pass them on. */
interface ReplyRun {
  msg: IncomingMessage;
  reply: UpstreamReply;
  recId: number;
  record: LaterWrites;
  log: Logger;
}

export async function replyTo(
  deps: ReplyDeps,
  msg: IncomingMessage,
  text: string,
  botId: string,
  signal: AbortSignal,
): Promise<ReplyStatus> {
  const platform = msg.place.platform;
  const log = deps.logger.child({ platform, eventId: msg.eventId });
  deps.metrics.replyStarted(platform);
  const conv = await deps.conversations.begin(msg.place, botId);
  const recId = await deps.inflight.begin(inFlightBegin(deps, msg, conv));
  // The reply's bookkeeping, in order and off its path (see laterWrites).
  const record = laterWrites(log);
  const reply = new UpstreamReply(deps, { msg, text, botId, recId, record, log }, conv);
  const run: ReplyRun = { msg, reply, recId, record, log };
  const limit = replyLimit(deps, log);
  const result = await driveWriter(deps, run, signal, limit.signal);
  limit.dispose();
  // A limit stopped the reply: make sure the upstream request is gone too.
  if (limit.signal.aborted) reply.abortRequest();
  if (limit.signal.aborted && limit.signal.reason === MESSAGES.stopped) {
    log.info('reply stopped by its asker');
    deps.metrics.replyStopped(platform);
  }
  if (result.outcome === 'done') rememberForVotes(deps, run, result);
  return endReply(deps, run, result, signal.aborted);
}

/** The in-flight record, written before the upstream call so that a crash can be repaired. */
function inFlightBegin(deps: ReplyDeps, msg: IncomingMessage, conv: ConversationUse): InFlightBegin {
  const begin: InFlightBegin = {
    platform: msg.place.platform,
    eventId: msg.eventId,
    target: msg.sink.target,
    at: deps.clock.now(),
    ...(deps.owner !== undefined ? { owner: deps.owner } : {}),
  };
  if (conv.conversationId !== undefined) begin.upstreamId = conv.conversationId;
  return begin;
}

/**
 * The reply's own limits: a deadline the upstream cannot stretch, and the asker's Stop, which
 * ends the reply the same way (upstream aborted, text kept). The abort reason is the end note.
 */
function replyLimit(deps: ReplyDeps, log: Logger): { signal: AbortSignal; dispose(): void } {
  const limit = new AbortController();
  const maxMs = deps.replyMaxMs;
  const deadline =
    maxMs === undefined
      ? undefined
      : deps.clock.setTimeout(() => {
          log.warn({ seconds: maxMs / 1000 }, 'reply passed its deadline; upstream request aborted');
          limit.abort(MESSAGES.replyDeadline(Math.round(maxMs / 1000)));
        }, maxMs);
  const onStop = () => {
    if (!limit.signal.aborted) limit.abort(MESSAGES.stopped);
  };
  if (deps.stop?.aborted) onStop();
  deps.stop?.addEventListener('abort', onStop, { once: true });
  return {
    signal: limit.signal,
    dispose: () => {
      deadline?.clear();
      deps.stop?.removeEventListener('abort', onStop);
    },
  };
}

/** The upstream's text through the writer to the platform, until it ends or a limit ends it. */
function driveWriter(deps: ReplyDeps, run: ReplyRun, signal: AbortSignal, limit: AbortSignal): Promise<PumpResult> {
  const { msg, reply, recId, record, log } = run;
  const { clock, inflight } = deps;
  const tables = msg.sink.monospaceTables;
  const deltas = reply.deltas();
  return pump(tables !== undefined ? monospaceTableStream(deltas, tables) : deltas, {
    sink: msg.sink,
    scheduler: deps.scheduler,
    clock,
    editIntervalMs: deps.editIntervalMs,
    platform: msg.place.platform,
    metrics: deps.metrics,
    logger: log,
    progress: (ids, last) => record('recording reply progress', () => inflight.progress(recId, ids, last, clock.now())),
    prefix: () => reply.prefix(),
    reserveChars: NOTE_RESERVE,
    receivedAt: msg.receivedAt,
    onFirstText: (at) => deps.hooks?.onFirstText?.(msg.eventId, at),
    signal,
    interruptedNote: MESSAGES.interrupted,
    describeError: describeChatError,
    emptyReplacement: MESSAGES.emptyReply,
    onStop: () => reply.cancel(),
    limit,
    ...(deps.replyKey !== undefined ? { replyKey: deps.replyKey } : {}),
    feedback: deps.feedback?.show === true && deps.replyKey !== undefined,
  });
}

/** Votes on the reply need its conversation and id after the process forgot the reply. */
function rememberForVotes(deps: ReplyDeps, run: ReplyRun, result: PumpResult): void {
  const store = deps.feedback?.store;
  const { replyKey } = deps;
  const lastMessage = result.messageIds.at(-1);
  if (deps.feedback?.show !== true || store === undefined || replyKey === undefined || lastMessage === undefined)
    return;
  const { msg, reply } = run;
  run.record('remembering a reply for feedback', () =>
    store.rememberReply({
      replyKey,
      platform: msg.place.platform,
      placeKey: placeKey(msg.place),
      upstreamId: reply.conv.conversationId,
      messageId: reply.replyMessageId ?? lastMessage,
      at: deps.clock.now(),
    }),
  );
}

/** How the reply ended, logged, counted and recorded; the run's status. */
async function endReply(deps: ReplyDeps, run: ReplyRun, result: PumpResult, shutdown: boolean): Promise<ReplyStatus> {
  const { metrics, clock } = deps;
  const { msg, log, record } = run;
  const platform = msg.place.platform;
  if (result.sourceError !== undefined) logUpstreamError(log, metrics, result.sourceError, shutdown);
  // The place now holds this message and its reply: a cached history of it is out of date.
  if (result.outcome !== 'failed') deps.context?.changed(msg.place);
  // And the connector's record of the place holds the reply (context when a read is capped).
  const lastId = result.messageIds.at(-1);
  if (lastId !== undefined && result.text !== '') msg.history?.remember?.({ messageId: lastId, text: result.text });
  record('recording the end of a reply', () =>
    deps.inflight.finish(run.recId, result.outcome === 'done' ? 'done' : result.outcome, clock.now()),
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
