import { ReplyWriter, type ReplyWriterOptions, type WriterResult } from './reply-writer.js';
import type { FinishOptions } from './reply-text.js';

// From an async iterable of text deltas to a reply sink: the deltas feed a ReplyWriter, which
// does the posting, coalesced editing and splitting, pacing its writes through the scheduler.
// The pump owns the reading side: it stops on abort (shutdown) or when a platform write failed
// for good, and turns an error of the source into a note after the text so far, or a message
// in place of the reply. A source may return a note to end the reply with (e.g. it was capped).

/** Text deltas; what the source returns at its end, when a string, is the reply's end note. */
export type ReplySource = AsyncIterable<string, string | undefined | void>;

export interface ErrorOutcome {
  outcome: 'interrupted' | 'failed';
  /** Appended after the text when the reply has some. */
  note?: string;
  /** Shown instead when the reply has no text yet. */
  replacement?: string;
}

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
type Stop = 'abort' | 'fatal' | 'limit';

/** How the reading ended, and what the writer's finish is given for it. */
interface Ending {
  outcome: PumpResult['outcome'];
  finish: FinishOptions;
  sourceError?: unknown;
}

export async function pump(source: ReplySource, opts: PumpOptions): Promise<PumpResult> {
  const writer = new ReplyWriter(opts);
  const stops = stopsOf(opts, writer);
  writer.start();
  let end: Ending;
  try {
    end = await read(source, writer, stops.stopped, opts);
  } finally {
    stops.dispose();
  }
  if (opts.feedback === true && end.outcome === 'done' && end.sourceError === undefined) end.finish.feedback = true;
  const result = await writer.finish(end.finish);
  const out: PumpResult = { ...result, outcome: result.error !== undefined ? 'failed' : end.outcome };
  if (end.sourceError !== undefined) out.sourceError = end.sourceError;
  return out;
}

/** Resolves with the first reason to stop reading early. */
function stopsOf(opts: PumpOptions, writer: ReplyWriter): { stopped: Promise<Stop>; dispose(): void } {
  let stopReading: (why: Stop) => void = () => {};
  const stopped = new Promise<Stop>((resolve) => (stopReading = resolve));
  void writer.failed.then(() => stopReading('fatal'));
  const onAbort = () => stopReading('abort');
  const onLimit = () => stopReading('limit');
  if (opts.signal?.aborted) onAbort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.limit?.aborted) onLimit();
  opts.limit?.addEventListener('abort', onLimit, { once: true });
  return {
    stopped,
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
  stopped: Promise<Stop>,
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

function stoppedEnding(why: Stop, opts: PumpOptions): Ending {
  if (why === 'limit') return { outcome: 'done', finish: noted(String(opts.limit?.reason ?? '')) };
  if (why === 'abort') return { outcome: 'interrupted', finish: noted(opts.interruptedNote) };
  return { outcome: 'failed', finish: {} };
}

/** A note after the text so far, or (trimmed) the reply when it has none. */
function noted(note: string): FinishOptions {
  return { note, replacement: note.trim() };
}
