import { ReplyWriter, type ReplyWriterOptions, type WriterResult } from './reply-writer.js';

// From an async iterable of text deltas to a reply sink: the deltas feed a ReplyWriter, which
// does the posting, coalesced editing and splitting, pacing its writes through the scheduler.
// The pump owns the reading side: it stops on abort (shutdown) or when a platform write failed
// for good, and turns an error of the source into a note after the text so far, or a message
// in place of the reply.

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
  /** Read when the source ends normally: a note to end the reply with (e.g. it was capped). */
  endNote?: () => string | undefined;
  /** A reply that ends normally (a limit or stop included) shows thumbs up/down on its last write. */
  feedback?: boolean;
}

export interface PumpResult extends WriterResult {
  outcome: 'done' | 'interrupted' | 'failed';
  /** The source's error, when it threw. */
  sourceError?: unknown;
}

export async function pump(source: AsyncIterable<string>, opts: PumpOptions): Promise<PumpResult> {
  let stopReading: (why: 'abort' | 'fatal' | 'limit') => void = () => {};
  const stopped = new Promise<'abort' | 'fatal' | 'limit'>((resolve) => (stopReading = resolve));
  const writer = new ReplyWriter(opts);
  void writer.failed.then(() => stopReading('fatal'));
  const onAbort = () => stopReading('abort');
  const onLimit = () => stopReading('limit');
  if (opts.signal?.aborted) onAbort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.limit?.aborted) onLimit();
  opts.limit?.addEventListener('abort', onLimit, { once: true });
  writer.start();

  const it = source[Symbol.asyncIterator]();
  let outcome: PumpResult['outcome'] = 'done';
  let finish: { note?: string; replacement?: string; feedback?: boolean } = {};
  let sourceError: unknown;
  try {
    for (;;) {
      const next = await Promise.race([it.next(), stopped]);
      if (next === 'abort' || next === 'fatal' || next === 'limit') {
        opts.onStop?.();
        // Do not await: a source stuck in next() would hold the reply open.
        void Promise.resolve(it.return?.()).catch(() => {});
        if (next === 'limit') {
          const note = String(opts.limit?.reason ?? '');
          finish = { note, replacement: note.trim() };
        } else if (next === 'abort') {
          outcome = 'interrupted';
          finish = { note: opts.interruptedNote, replacement: opts.interruptedNote.trim() };
        } else {
          outcome = 'failed';
        }
        break;
      }
      if (next.done) {
        const note = opts.endNote?.();
        if (note !== undefined) finish = { note, replacement: note.trim() };
        else if (opts.emptyReplacement !== undefined) finish = { replacement: opts.emptyReplacement };
        break;
      }
      writer.append(next.value);
    }
  } catch (err) {
    if (opts.limit?.aborted && !opts.signal?.aborted) {
      // The source failed because the limit cancelled it: the reply ends at the limit, not in error.
      const note = String(opts.limit.reason ?? '');
      finish = { note, replacement: note.trim() };
    } else {
      sourceError = err;
      const d = opts.signal?.aborted
        ? { outcome: 'interrupted' as const, note: opts.interruptedNote, replacement: opts.interruptedNote.trim() }
        : opts.describeError(err);
      outcome = d.outcome;
      finish = {};
      if (d.note !== undefined) finish.note = d.note;
      if (d.replacement !== undefined) finish.replacement = d.replacement;
    }
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    opts.limit?.removeEventListener('abort', onLimit);
  }
  if (opts.feedback === true && outcome === 'done' && sourceError === undefined) finish.feedback = true;
  const result = await writer.finish(finish);
  if (result.error !== undefined) outcome = 'failed';
  const out: PumpResult = { ...result, outcome };
  if (sourceError !== undefined) out.sourceError = sourceError;
  return out;
}
