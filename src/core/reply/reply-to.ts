import type { Logger } from 'pino';
import { monospaceTableStream } from './tables.js';
import { ChatError } from '../chat-port.js';
import type { ConversationUse } from './conversations.js';
import type { BridgeMetrics } from '../metrics-port.js';
import type { Clock, IncomingMessage, InFlightBegin } from '../ports.js';
import { isStoreUnavailable } from '../store-errors.js';
import { placeKey } from '../ports.js';
import type { FinishOptions } from './reply-text.js';
import { agentAppendix, type AgentWork } from './agent-work.js';
import type { AgentFile } from '../chat-port.js';
import { ReplyWriter, type ReplyWriterOptions, type WriterResult } from './reply-writer.js';
import type { WriteScheduler } from '../budget/write-scheduler.js';
import { type UpstreamDeps, UpstreamReply } from './upstream-reply.js';
import { describeChatError, type ErrorOutcome, MESSAGES, NOTE_RESERVE } from '../user-messages.js';

// One user message answered, step by step: the conversation, the in-flight record (written before
// the upstream call, so a crash can be repaired), the upstream call (upstream-reply.ts: what is
// asked and read back), the reply's limits (deadline, the asker's Stop), the pump of its text into
// the writer (below), remembering it for votes; then the bookkeeping of how the reply ended,
// written in order and off the reply's path (laterWrites).

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
  const record = laterWrites(log, deps.clock);
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
    work: reply.work,
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

export interface LaterWrites {
  (what: string, fn: () => Promise<unknown>): void;
  /** Resolves once every write queued so far is done (or failed and was logged). */
  settled(): Promise<void>;
}

/**
 * A reply's bookkeeping writes (progress, ids, the end), one after another in the order queued,
 * without the reply waiting for them: a database round trip must not delay the user's text.
 * Crash-repair bookkeeping must not break a reply the user is already seeing either: a store that
 * fails mid-reply (it went read-only, the disk filled) costs the repair record, not the reply.
 * A write the store refused as unavailable (a connection cut, a failover) is tried again a few
 * times, within LATER_RETRY_BUDGET_MS for the whole reply: the conversation id the upstream named
 * is what the place's next message continues (issue 37).
 */
export function laterWrites(log: Logger, clock?: Clock): LaterWrites {
  let tail: Promise<void> = Promise.resolve();
  let budget = LATER_RETRY_BUDGET_MS;
  const attempt = async (fn: () => Promise<unknown>): Promise<void> => {
    for (let wait = LATER_RETRY_FIRST_MS; ; wait *= 2) {
      try {
        await fn();
        return;
      } catch (err) {
        if (clock === undefined || !isStoreUnavailable(err) || wait > budget) throw err;
        budget -= wait;
        await new Promise<void>((resolve) => clock.setTimeout(resolve, wait));
      }
    }
  };
  const queue = (what: string, fn: () => Promise<unknown>) => {
    tail = tail
      .then(() => attempt(fn))
      .then(
        () => {},
        (err: unknown) => log.warn({ err: err instanceof Error ? err.message : String(err) }, `${what} failed`),
      );
  };
  return Object.assign(queue, { settled: () => tail });
}

/** A refused bookkeeping write goes again after 200 ms, doubling, within 6 s for the whole reply. */
const LATER_RETRY_FIRST_MS = 200;
const LATER_RETRY_BUDGET_MS = 6_000;

// From an async iterable of text deltas to a reply sink: the deltas feed a ReplyWriter, which
// does the posting, coalesced editing and splitting, pacing its writes through the scheduler.
// The pump owns the reading side: it stops on abort (shutdown) or when a platform write failed
// for good, and turns an error of the source into a note after the text so far, or a message
// in place of the reply. A source may return a note to end the reply with (e.g. it was capped).

/** Text deltas; what the source returns at its end, when a string, is the reply's end note. */
export type ReplySource = AsyncIterable<string, string | undefined | void>;

export interface PumpOptions extends ReplyWriterOptions {
  /** Shutdown: stop reading, keep the text and finish it as interrupted. */
  signal?: AbortSignal;
  /** After an abort: appended to the text so far, or (trimmed) the reply when it has none. */
  interruptedNote: string;
  /** How an error thrown by the source is shown. */
  describeError(err: unknown): ErrorOutcome;
  /** Shown when the source ended without any text. */
  emptyReplacement?: string;
  /** Called when the pump stops reading early (abort, failed write), e.g. to cancel the upstream. */
  onStop?: () => void;
  /**
   * A limit of the reply (its deadline): on abort, stop reading and end the reply normally with
   * the text so far and `String(signal.reason)` as a note. A source stuck waiting cannot delay it.
   */
  limit?: AbortSignal;
  /** A reply that ends normally (a limit or stop included) shows thumbs up/down on its last write. */
  feedback?: boolean;
}

export interface PumpResult extends WriterResult {
  outcome: 'done' | 'interrupted' | 'failed';
  /** The source's error, when it threw. */
  sourceError?: unknown;
}

/** Why the pump stopped reading before the source ended: shutdown, a failed write, a limit. */
type EarlyEnd = 'abort' | 'fatal' | 'limit';

/** How the reading ended, and what the writer's finish is given for it. */
interface Ending {
  outcome: PumpResult['outcome'];
  finish: FinishOptions;
  sourceError?: unknown;
}

export async function pump(source: ReplySource, opts: PumpOptions): Promise<PumpResult> {
  const writer = new ReplyWriter(opts);
  const stops = earlyEndsOf(opts, writer);
  writer.start();
  let end: Ending;
  try {
    end = await read(source, writer, stops.ended, opts);
  } finally {
    stops.dispose();
  }
  if (opts.feedback === true && end.outcome === 'done' && end.sourceError === undefined) end.finish.feedback = true;
  if (opts.work !== undefined) withAgentAppendix(end.finish, opts.work, opts);
  const result = await writer.finish(end.finish);
  const out: PumpResult = { ...result, outcome: result.error !== undefined ? 'failed' : end.outcome };
  if (end.sourceError !== undefined) out.sourceError = end.sourceError;
  return out;
}

/** Resolves with the first reason to stop reading early. */
function earlyEndsOf(opts: PumpOptions, writer: ReplyWriter): { ended: Promise<EarlyEnd>; dispose(): void } {
  let endReading: (why: EarlyEnd) => void = () => {};
  const ended = new Promise<EarlyEnd>((resolve) => (endReading = resolve));
  void writer.failed.then(() => endReading('fatal'));
  const onAbort = () => endReading('abort');
  const onLimit = () => endReading('limit');
  if (opts.signal?.aborted) onAbort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.limit?.aborted) onLimit();
  opts.limit?.addEventListener('abort', onLimit, { once: true });
  return {
    ended,
    dispose: () => {
      opts.signal?.removeEventListener('abort', onAbort);
      opts.limit?.removeEventListener('abort', onLimit);
    },
  };
}

/** The source's text into the writer, until the source ends, throws, or a reason to stop comes. */
async function read(
  source: ReplySource,
  writer: ReplyWriter,
  stopped: Promise<EarlyEnd>,
  opts: PumpOptions,
): Promise<Ending> {
  const it = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await Promise.race([it.next(), stopped]);
      if (typeof next === 'string') {
        opts.onStop?.();
        // Do not await: a source stuck in next() would hold the reply open.
        void Promise.resolve(it.return?.()).catch(() => {});
        return stoppedEnding(next, opts);
      }
      if (next.done) {
        const note = next.value;
        if (typeof note === 'string') return { outcome: 'done', finish: noted(note) };
        return {
          outcome: 'done',
          finish: opts.emptyReplacement !== undefined ? { replacement: opts.emptyReplacement } : {},
        };
      }
      writer.append(next.value);
    }
  } catch (err) {
    // The source failed because the limit cancelled it: the reply ends at the limit, not in error.
    if (opts.limit?.aborted && !opts.signal?.aborted) return stoppedEnding('limit', opts);
    if (opts.signal?.aborted) return { ...stoppedEnding('abort', opts), sourceError: err };
    const d = opts.describeError(err);
    const finish: FinishOptions = {};
    if (d.note !== undefined) finish.note = d.note;
    if (d.replacement !== undefined) finish.replacement = d.replacement;
    return { outcome: d.outcome, finish, sourceError: err };
  }
}

function stoppedEnding(why: EarlyEnd, opts: PumpOptions): Ending {
  if (why === 'limit') return { outcome: 'done', finish: noted(String(opts.limit?.reason ?? '')) };
  if (why === 'abort') return { outcome: 'interrupted', finish: noted(opts.interruptedNote) };
  return { outcome: 'failed', finish: {} };
}

/**
 * The agent's sources and the files the sink does not show, after the text. A reply with no text
 * but images the sink shows is those images, named, rather than the empty-reply notice.
 */
function withAgentAppendix(finish: FinishOptions, work: AgentWork, opts: PumpOptions): void {
  const shows = (f: AgentFile) => opts.sink.showsFile?.(f) === true;
  const appendix = agentAppendix(work, shows);
  const shown = work.files.filter(shows);
  if (finish.replacement !== undefined && finish.replacement === opts.emptyReplacement && shown.length > 0)
    finish.bare = shown.map((f) => f.name).join('\n');
  if (appendix !== '') finish.appendix = appendix;
}

/** A note after the text so far, or (trimmed) the reply when it has none. */
function noted(note: string): FinishOptions {
  return { note, replacement: note.trim() };
}
