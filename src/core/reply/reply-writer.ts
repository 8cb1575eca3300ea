import {
  type Clock,
  PLAIN_FALLBACK,
  PlatformRateLimitedError,
  PlatformWriteError,
  type WriteOptions,
  type WriteResult,
} from '../ports.js';
import { type FinishOptions, hasText, MessageLedger, nextWrite, ReplyText, type WritePlan } from './reply-text.js';
import { NOTHING_SENT } from '../budget/write-scheduler.js';
import type { Logger } from 'pino';
import type { AgentWork } from './agent-work.js';
import type { AgentFile } from '../chat-port.js';
import { type PacerOptions, WritePacer } from './write-pacer.js';

// Shows one reply on the platform while its text grows: nothing before there is non-whitespace
// text; the first text posted at once; then edits of the message at most once per edit interval,
// each carrying everything that arrived meanwhile, the next only after the previous finished; one
// final write per message, as soon as the buckets allow once the upstream ended; continuation in a
// new message when the text outgrows the message or the message grows too old. What the next
// write is comes from reply-text.ts; when it may leave from the edit interval here and from the
// WritePacer (write-pacer.ts: the write's priority, the grant, the final reserved, stream or post
// once). Every write goes through the one scheduler, and its outcome back through its grant.

export interface ReplyWriterOptions extends PacerOptions {
  clock: Clock;
  editIntervalMs: number;
  logger: Logger;
  /**
   * Records each write's text with the reply's message ids: an edit before it is sent (crash
   * repair must not roll the message back), a post once the platform gave its id.
   */
  progress?: (messageIds: string[], lastText: string) => void;
  /** Put before the reply once it has content (e.g. the renewed-conversation note). Read lazily. */
  prefix?: () => string;
  /** Room kept free in every message so that a note appended later (after a crash too) fits. */
  reserveChars?: number;
  /** Epoch ms the user's message arrived (for the first-text metric). */
  receivedAt?: number;
  onFirstText?: (at: number) => void;
  /** The reply's key, passed to every write (WriteOptions.replyKey) for the sink's controls. */
  replyKey?: string;
  /**
   * The agent's work beside the text: its steps shown while the reply streams (a sink that
   * `showsSteps`), the files the sink shows given to the reply's last write.
   */
  work?: AgentWork;
}

/** A write that went: the platform's answer, what it carried and when it left. */
type Written = WriteResult & { plan: Extract<WritePlan, { kind: 'write' }>; startedAt: number; steps: number };

export interface WriterResult {
  messageIds: string[];
  /** The reply's full text as composed (prefix, upstream text, note), without split fence lines. */
  text: string;
  /** Set when a write failed for good. */
  error?: unknown;
}

/**
 * The phase a reply is in, as far as the platform shows it. It moves forward only:
 *
 *   working ─► post-once ─► steps ─► text
 *      └──────────┴─────────►┴───────►┘
 *   any ─► failed
 *
 * `working`: nothing on the platform yet (the working indicator shows, if started). `post-once`:
 * nothing until the end, when the whole text is posted once (the pacer found no budget for one
 * more streamed reply's final). `steps`: a write went, showing the agent's steps but no answer
 * text. `text`: the answer's text is on the platform (its first-text metric went). `failed`: a
 * write failed for good; no write follows, and `shown` says whether one had gone before.
 */
type WriterState =
  | { phase: 'working' }
  | { phase: 'post-once' }
  | { phase: 'steps' }
  | { phase: 'text' }
  | { phase: 'failed'; error: unknown; shown: boolean };

/** Retries of a write the sink says may work again (network), with growing delay from the base. */
const MAX_WRITE_RETRIES = 3;
const RETRY_BASE_MS = 500;

export class ReplyWriter {
  private readonly o: ReplyWriterOptions;
  private readonly text: ReplyText;
  private readonly ledger = new MessageLedger();
  private readonly pacer: WritePacer;
  private state: WriterState = { phase: 'working' };
  private retries = 0;
  private running: Promise<void> | undefined;
  /** Wakes a pause waiting for new text. */
  private wakeOnInput: (() => void) | undefined;
  /** Wakes a pause waiting for new text or the end (the edit interval does not delay a final). */
  private wakeOnEnd: (() => void) | undefined;
  private working: Promise<void> = Promise.resolve();
  /** The files the sink shows went with the reply's last write. */
  private filesShown = false;

  /** Resolves once a write failed for good: the reader of the upstream should stop then. */
  readonly failed: Promise<void>;
  private markFailed: () => void = () => {};

  constructor(opts: ReplyWriterOptions) {
    this.o = opts;
    this.failed = new Promise<void>((resolve) => (this.markFailed = resolve));
    this.text = new ReplyText(opts.prefix);
    this.pacer = new WritePacer(opts);
    opts.work?.onSteps(() => this.stepsChanged());
  }

  /** Something is on the platform (a write went), whatever happened since. */
  private get shown(): boolean {
    const { state } = this;
    return state.phase === 'steps' || state.phase === 'text' || (state.phase === 'failed' && state.shown);
  }

  /** A write went: its text is answer text (`text`) or only the agent's steps. */
  private toShown(text: boolean): void {
    if (this.state.phase === 'failed' || this.state.phase === 'text') return;
    this.state = { phase: text ? 'text' : 'steps' };
  }

  private toFailed(error: unknown): void {
    this.state = { phase: 'failed', error, shown: this.shown };
  }

  /**
   * The agent's steps changed: named in the working indicator while nothing is shown, and written
   * into the reply's message (a sink that shows steps) by the loop, paced like an edit.
   */
  private stepsChanged(): void {
    const { sink, work } = this.o;
    if (work === undefined || this.text.ended) return;
    // Between two steps none runs for a moment: the indicator keeps naming the last one.
    const running = work.running();
    if (!this.shown && sink.showStep !== undefined && running !== undefined)
      this.working = this.working.then(() => sink.showStep?.(running)).catch(() => {});
    if (sink.showsSteps === true) this.kick();
  }

  /** The sink shows steps, there are some, and the current message does not show them as they are. */
  private stepsDue(): boolean {
    const { sink, work } = this.o;
    if (work === undefined || sink.showsSteps !== true || work.steps.length === 0 || this.text.ended) return false;
    return this.ledger.msg.steps !== work.version && !this.ledger.msg.final;
  }

  /** Files the sink shows itself, not yet given to it. */
  private filesDue(): readonly AgentFile[] {
    const { sink, work } = this.o;
    if (this.filesShown || work === undefined || sink.showsFile === undefined) return [];
    return work.files.filter((f) => sink.showsFile?.(f) === true);
  }

  /** Show the working indicator (not awaited: it must not delay the upstream request). */
  start(): void {
    this.working = this.o.sink.showWorking().catch(() => {});
  }

  append(delta: string): void {
    if (this.text.append(delta, this.o.clock.now())) this.kick();
  }

  /** End the reply: the last write of the last message, then resolve. */
  async finish(opts: FinishOptions = {}): Promise<WriterResult> {
    if (!this.text.ended) {
      this.text.end(opts);
      this.pacer.ended();
      this.wakeOnEnd?.();
    }
    this.kick();
    // The loop may restart itself once (text that came in while it was finishing).
    for (let i = 0; i < 100 && this.running !== undefined; i++) await this.running;
    if (!this.shown) await this.working.then(() => this.o.sink.clearWorking()).catch(() => {});
    this.pacer.close();
    const result: WriterResult = { messageIds: [...this.ledger.ids], text: this.text.content() };
    if (this.state.phase === 'failed') result.error = this.state.error;
    return result;
  }

  private kick(): void {
    if (this.running === undefined) {
      this.running = this.run().finally(() => {
        this.running = undefined;
        // Text may have arrived while the loop was finishing.
        if (this.state.phase === 'failed') return;
        const { kind } = this.plan();
        if (kind !== 'done' && kind !== 'wait') this.kick();
      });
    } else {
      this.wakeOnInput?.();
    }
  }

  /**
   * The current message's next write, from the text as it is now; and the agent's steps: a
   * message that waits for text shows changed steps by a write of its text as it is (no text yet:
   * a post of the steps alone), and a message that shows steps, or a last message owing the
   * sink's files, has its final write even when its text did not change.
   */
  private plan(): WritePlan {
    const plan = this.textPlan();
    const { msg } = this.ledger;
    if (plan.kind === 'wait' && this.stepsDue())
      return { kind: 'write', text: msg.id !== undefined ? msg.sent : '', final: false };
    if (plan.kind === 'done' && msg.id !== undefined && !msg.final && (msg.steps !== 0 || this.filesDue().length > 0))
      return { kind: 'write', text: msg.sent, final: true };
    return plan;
  }

  private textPlan(): WritePlan {
    const rolloverAt = this.ledger.rolloverAt(this.o.sink.maxMessageAgeMs, this.o.editIntervalMs);
    return nextWrite(this.text, this.ledger, {
      maxChars: this.o.sink.maxChars,
      reserveChars: this.o.reserveChars ?? 0,
      needsFinalWrite: this.o.sink.needsFinalWrite === true,
      rolloverDue: rolloverAt !== undefined && this.o.clock.now() >= rolloverAt,
      growth: this.text.pace.perInterval(this.o.clock.now(), this.o.editIntervalMs),
    });
  }

  private async run(): Promise<void> {
    // Bounded: every pass writes, sleeps until a deadline, waits for new input, or moves past
    // text (a whitespace-only cut, the one yield before a post).
    /** The loop let the event loop turn once since its last write (see below). */
    let yielded = false;
    while (this.state.phase !== 'failed') {
      const plan = this.plan();
      if (plan.kind === 'done') return;
      if (plan.kind === 'skip') {
        this.ledger.advance(plan.consumed, plan.reopen);
        continue;
      }
      if (plan.kind === 'wait') {
        await this.pause(this.waitUntil(plan.paced === true), true);
        continue;
      }
      const ending = this.text.ended;
      const posted = this.ledger.msg.id !== undefined;
      if (!posted && !ending) {
        if (!yielded) {
          // Let the event loop turn once before a post: deltas and the end that arrived together
          // (a reply sent whole) then make one final post instead of a post and an edit.
          yielded = true;
          await new Promise<void>((resolve) => setImmediate(resolve));
          continue;
        }
        if (this.state.phase === 'working' && this.ledger.ids.length === 0) {
          this.pacer.chooseMode();
          if (this.pacer.mode === 'post-once') this.state = { phase: 'post-once' };
        }
        if (this.state.phase === 'post-once') {
          // Nothing is shown until the end: the whole text is posted once then.
          await this.pause(undefined, true);
          continue;
        }
      }
      // While the reply streams, a message is written at most once per edit interval; once it
      // ended, at once: the final is paced by the buckets alone.
      const due = posted && !ending ? this.ledger.msg.lastWriteAt + this.o.editIntervalMs : 0;
      if (this.o.clock.now() < due) {
        // New text joins this write; the end of the reply cuts the wait short.
        await this.pause(due, false);
        continue;
      }
      yielded = false;
      // A write of steps alone (no text a user is owed) is an intermediate one, even as a post.
      const stepsOnly = !plan.final && plan.text === this.ledger.msg.sent;
      await this.write(posted ? 'edit' : 'post', plan.final, stepsOnly);
    }
  }

  /**
   * What every write of this reply tells the sink (built here only): the reply's key for its
   * controls (Stop), and on the reply's last write (`last`) whether it shows feedback buttons.
   */
  private writeOptions(final: boolean, continues: boolean): WriteOptions {
    const opts: WriteOptions = { final, part: this.ledger.part };
    if (this.o.replyKey !== undefined) opts.replyKey = this.o.replyKey;
    const { work, sink } = this.o;
    if (!final && work !== undefined && sink.showsSteps === true && work.steps.length > 0)
      opts.steps = work.steps.slice();
    if (final && !continues && this.text.ended) {
      opts.last = true;
      if (this.text.feedback) opts.feedback = true;
      const files = this.filesDue();
      if (files.length > 0) opts.files = files;
    }
    return opts;
  }

  private async write(op: 'post' | 'edit', final: boolean, stepsOnly = false): Promise<void> {
    const { sink, clock, platform, metrics } = this.o;
    let sent = false;
    let done: Written | typeof NOTHING_SENT;
    try {
      done = await this.pacer.write(op, final, this.ledger.ids.length > 0 || stepsOnly, async () => {
        // The text as it is when the request leaves, not as it was when the write was queued: a
        // write that waited past the end of the upstream carries the whole reply (and is its final).
        const plan = this.plan();
        if (plan.kind !== 'write') return NOTHING_SENT;
        sent = true;
        const startedAt = clock.now();
        const opts = this.writeOptions(plan.final, plan.next !== undefined);
        const steps = opts.steps !== undefined ? (this.o.work?.version ?? 0) : 0;
        if (opts.files !== undefined) this.filesShown = true;
        if (op === 'post') {
          const posted = await sink.post(plan.text, opts);
          this.ledger.posted(posted.messageId, startedAt);
          if (!this.text.ended) this.pacer.reserveFinal();
          return { ...posted, plan, startedAt, steps };
        }
        // Recorded before the edit: a crash between the platform applying it and a record after
        // it would make the repair roll the message back to older text.
        this.recordProgress(plan.text);
        return { ...(await sink.edit(this.ledger.msg.id as string, plan.text, opts)), plan, startedAt, steps };
      });
    } catch (err) {
      // Not granted (an intermediate write overtaken by the end of the reply, the scheduler closed)
      // is no error; a write that went and failed is (the scheduler already has its outcome).
      if (sent) await this.onWriteError(err);
      return;
    }
    if (done === NOTHING_SENT) return;
    const { plan, startedAt, fallbacks, steps } = done;
    this.retries = 0;
    metrics.platformWrite(platform, op === 'edit' ? 'edit' : this.ledger.part > 0 ? 'continuation' : 'post');
    for (const reason of fallbacks ?? []) metrics.plainFallback(platform, reason);
    this.ledger.wrote(plan.text, plan.final, startedAt, steps);
    const wasShown = this.shown;
    const wasText = this.state.phase === 'text';
    this.toShown(hasText(plan.text));
    if (!wasShown) void this.working.then(() => sink.clearWorking()).catch(() => {});
    if (!wasText && this.state.phase === 'text') {
      const at = clock.now();
      if (this.o.receivedAt !== undefined)
        metrics.platformFirstText(platform, Math.max(0, at - this.o.receivedAt) / 1000);
      this.o.onFirstText?.(at);
    }
    // A post is recorded once its message id is known (an edit was recorded before it was sent).
    if (op === 'post') this.recordProgress(plan.text);
    if (plan.next !== undefined) {
      this.ledger.advance(plan.next.consumed, plan.next.reopen);
      this.ledger.nextMessage();
    }
  }

  private recordProgress(text: string): void {
    try {
      this.o.progress?.([...this.ledger.ids], text);
    } catch (err) {
      // Losing a progress record only weakens crash repair; the reply itself goes on.
      this.o.logger.warn({ err }, 'could not record reply progress');
    }
  }

  private async onWriteError(err: unknown): Promise<void> {
    const { metrics, platform, logger } = this.o;
    if (err instanceof PlatformRateLimitedError) {
      // The grant told the scheduler, which holds the bucket; the loop retries with whatever text
      // is current then.
      metrics.platformRateLimited(platform, err.bucket);
      logger.warn({ bucket: err.bucket, retryAfterMs: err.retryAfterMs }, 'platform rate limit hit');
      return;
    }
    // Refused for its rich form (the plain fallback): the sink writes plainly from now on; the loop writes again on a new grant.
    if (err instanceof PlatformWriteError && err.code === PLAIN_FALLBACK) return;
    if (err instanceof PlatformWriteError && err.retryable && this.retries < MAX_WRITE_RETRIES) {
      this.retries++;
      logger.warn({ code: err.code, attempt: this.retries }, 'platform write failed, retrying');
      // A backoff is for the platform's sake: neither new text nor the end cuts it short.
      await new Promise<void>((resolve) => {
        this.o.clock.setTimeout(resolve, RETRY_BASE_MS * 2 ** (this.retries - 1));
      });
      return;
    }
    this.toFailed(err);
    const code = err instanceof PlatformWriteError ? err.code : undefined;
    logger.error(
      { code, err: err instanceof Error ? err.message : String(err) },
      'platform write failed; reply abandoned',
    );
    this.markFailed();
  }

  /** Wait until `until` (if any), the end of the reply, or (onInput) new text. */
  /**
   * How long a waiting message sleeps when no text comes: until its maximum age, and when it holds
   * text back for a cut the text's pace promised (`paced`), an interval at most: by then the pace
   * is measured again, and text the upstream stopped sending after is shown.
   */
  private waitUntil(paced: boolean): number | undefined {
    const rollover = this.ledger.rolloverAt(this.o.sink.maxMessageAgeMs, this.o.editIntervalMs);
    if (!paced) return rollover;
    const recheck = this.o.clock.now() + this.o.editIntervalMs;
    return rollover === undefined ? recheck : Math.min(rollover, recheck);
  }

  private pause(until: number | undefined, onInput: boolean): Promise<void> {
    return new Promise((resolve) => {
      const t =
        until === undefined
          ? undefined
          : this.o.clock.setTimeout(() => done(), Math.max(0, until - this.o.clock.now()));
      const done = () => {
        t?.clear();
        this.wakeOnInput = undefined;
        this.wakeOnEnd = undefined;
        resolve();
      };
      this.wakeOnEnd = done;
      if (onInput) this.wakeOnInput = done;
    });
  }
}
