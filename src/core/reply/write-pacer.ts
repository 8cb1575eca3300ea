import type { Platform, ReplySink, WriteResult } from '../ports.js';
import type { NOTHING_SENT, WritePriority, WriteScheduler } from '../budget/write-scheduler.js';
import type { BridgeMetrics } from '../metrics-port.js';

// When a reply's writes may leave (reply-writer.ts decides what they carry): each write asks the
// one scheduler for its grant, with a priority from what it is; a streaming reply reserves budget for
// its final from the moment it chose to stream; a reply the budgets cannot pay a final for posts
// its whole text once at the end instead of streaming.

export type StreamMode = 'stream' | 'post-once';

/** What the pacer of one reply writes through. */
export interface PacerOptions {
  sink: ReplySink;
  scheduler: WriteScheduler;
  platform: Platform;
  metrics: BridgeMetrics;
}

export class WritePacer {
  private modeChosen: StreamMode | undefined;
  /** An intermediate write waiting for budget: aborted when the reply ends (the final replaces it). */
  private pendingIntermediate: AbortController | undefined;
  /** Budget reserved for this reply's final write while it streams (see WriteScheduler.reserve). */
  private releaseReserve: (() => void) | undefined;
  /** This reply counts in the post-once gauge. */
  private inPostOnceGauge = false;

  constructor(private readonly o: PacerOptions) {}

  /** The mode chosen by chooseMode(); undefined before. */
  get mode(): StreamMode | undefined {
    return this.modeChosen;
  }

  /**
   * Before the reply's first post while the upstream still runs: stream if the budgets can pay
   * this reply's final besides those of the live replies, else post the whole text once at the end
   * (the working indicator, which costs no write budget, shows meanwhile). Chooses once; `mode`
   * tells the choice.
   */
  chooseMode(): void {
    if (this.modeChosen !== undefined) return;
    const { scheduler, sink, metrics, platform } = this.o;
    scheduler.weighFinal(sink.buckets('edit'));
    this.modeChosen = scheduler.canAffordFinal(sink.buckets('edit')) ? 'stream' : 'post-once';
    // The final is reserved the moment the reply chooses to stream, not once its first post is in:
    // replies that choose while this one waits for its post budget must count its final too.
    if (this.modeChosen === 'stream') this.reserveFinal();
    if (this.modeChosen === 'post-once') {
      this.inPostOnceGauge = true;
      metrics.postOnce(platform, 1);
    }
  }

  /**
   * One write through the scheduler (`send` runs once granted); rejects without sending when an
   * intermediate write was overtaken by the end or the scheduler closed. Finals
   * of a reply the user already sees come first; a post (the first text, or a post-once reply's
   * only one) after them; intermediate writes last, leaving what reserved finals need. A continuation
   * posted while the reply streams is one of those: its text is not final, so it costs a write
   * besides the message's final one, like an edit. Left waiting when the reply ends, it is
   * dropped and asked again as the message's final post (see ended()).
   */
  async write<T extends WriteResult | typeof NOTHING_SENT>(
    op: 'post' | 'edit',
    final: boolean,
    shown: boolean,
    send: () => Promise<T>,
  ): Promise<T> {
    const priority: WritePriority = op === 'post' && !shown ? 'first' : final ? 'final' : 'edit';
    const pending = priority === 'edit' ? new AbortController() : undefined;
    this.pendingIntermediate = pending;
    // One attempt: after a 429 the writer plans again (the text has grown) and asks anew.
    return this.o.scheduler
      .write(this.o.sink.buckets(op), priority, send, { signal: pending?.signal, attempts: 1 })
      .finally(() => {
        if (this.pendingIntermediate === pending) this.pendingIntermediate = undefined;
      });
  }

  /** From the first message on, a streaming reply will need a final edit: reserve budget for it. */
  reserveFinal(): void {
    if (this.releaseReserve !== undefined || this.modeChosen === 'post-once') return;
    this.releaseReserve = this.o.scheduler.reserve(this.o.sink.buckets('edit'));
  }

  /**
   * The upstream ended: an intermediate write still queued (an edit, a continuation post) would
   * show stale text and then need another write, so it is dropped and the writer asks again with
   * the final's priority.
   */
  ended(): void {
    this.pendingIntermediate?.abort();
  }

  /** The reply is over: release what it reserved. Idempotent. */
  close(): void {
    this.releaseReserve?.();
    if (this.inPostOnceGauge) {
      this.inPostOnceGauge = false;
      this.o.metrics.postOnce(this.o.platform, -1);
    }
  }
}
