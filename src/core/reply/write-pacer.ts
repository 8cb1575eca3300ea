import type { BridgeMetrics } from '../metrics-port.js';
import type { Clock, Platform, ReplySink } from '../ports.js';
import type { WriteGrant, WritePriority, WriteScheduler } from '../budget/scheduler.js';

// When a reply's next write may leave: the edit interval between two writes of one message, the
// write's priority, the scheduler's grant, the budget held for the reply's final, and whether the
// reply streams at all ("post once" when the budgets cannot pay one more live reply's final).

export type StreamMode = 'stream' | 'post-once';

export interface PacerOptions {
  sink: ReplySink;
  scheduler: WriteScheduler;
  clock: Clock;
  editIntervalMs: number;
  platform: Platform;
  metrics: BridgeMetrics;
}

export class WritePacer {
  private modeChosen: StreamMode | undefined;
  /** An intermediate write waiting for budget: aborted when the reply ends (the final replaces it). */
  private pendingIntermediate: AbortController | undefined;
  /** Budget held for this reply's final write while it streams (see WriteScheduler.hold). */
  private releaseHold: (() => void) | undefined;
  /** This reply counts in the post-once gauge. */
  private inPostOnceGauge = false;

  constructor(private readonly o: PacerOptions) {}

  /**
   * Before the reply's first post while the upstream still runs: stream if the budgets can pay
   * this reply's final besides those of the live replies, else post the whole text once at the end
   * (the working indicator, which costs no write budget, shows meanwhile).
   */
  chooseMode(): StreamMode {
    if (this.modeChosen !== undefined) return this.modeChosen;
    const { scheduler, sink, metrics, platform } = this.o;
    this.modeChosen = scheduler.canAffordFinal(sink.buckets('edit')) ? 'stream' : 'post-once';
    // The final is held the moment the reply chooses to stream, not once its first post is in:
    // replies that choose while this one waits for its post budget must count its final too.
    if (this.modeChosen === 'stream') this.holdFinal();
    if (this.modeChosen === 'post-once') {
      this.inPostOnceGauge = true;
      metrics.postOnce(platform, 1);
    }
    return this.modeChosen;
  }

  /**
   * When the current message may be written next. While the reply streams, at most once per edit
   * interval; once it ended, at once: the final is paced by the buckets alone.
   */
  dueAt(lastWriteAt: number | undefined, ending: boolean): number {
    if (ending || lastWriteAt === undefined) return this.o.clock.now();
    return lastWriteAt + this.o.editIntervalMs;
  }

  /**
   * Finals of a reply the user already sees come first; a post (the first text, or a post-once
   * reply's only one) after them; intermediate writes last, leaving what held finals need. A
   * continuation posted while the reply streams is one of those: its text is not final, so it
   * costs a write besides the message's final one, like an edit. Left waiting when the reply
   * ends, it is dropped and asked again as the message's final post (see ended()).
   */
  priority(op: 'post' | 'edit', final: boolean, shown: boolean): WritePriority {
    if (op === 'post' && !shown) return 'first';
    return final ? 'final' : 'edit';
  }

  /** A grant for one write; undefined when an intermediate write was overtaken by the end. */
  async acquire(op: 'post' | 'edit', priority: WritePriority): Promise<WriteGrant | undefined> {
    const pending = priority === 'edit' ? new AbortController() : undefined;
    this.pendingIntermediate = pending;
    try {
      return await this.o.scheduler.acquire(this.o.sink.buckets(op), priority, pending?.signal);
    } catch {
      return undefined; // an intermediate write overtaken by the end of the reply, or the scheduler closed
    } finally {
      if (this.pendingIntermediate === pending) this.pendingIntermediate = undefined;
    }
  }

  /** From the first message on, a streaming reply will need a final edit: hold budget for it. */
  holdFinal(): void {
    if (this.releaseHold !== undefined || this.modeChosen === 'post-once') return;
    this.releaseHold = this.o.scheduler.hold(this.o.sink.buckets('edit'));
  }

  /**
   * The upstream ended: an intermediate write still queued (an edit, a continuation post) would
   * show stale text and then need another write, so it is dropped and the writer asks again with
   * the final's priority.
   */
  ended(): void {
    this.pendingIntermediate?.abort();
  }

  /** The reply is over: release what it held. Idempotent. */
  close(): void {
    this.releaseHold?.();
    if (this.inPostOnceGauge) {
      this.inPostOnceGauge = false;
      this.o.metrics.postOnce(this.o.platform, -1);
    }
  }
}
