import { PlatformRateLimitedError, PlatformWriteError, type WriteOptions, type WriteResult } from './ports.js';
import type { WriteGrant, WritePriority } from './scheduler.js';
import { cutAt, fenceCloser, splitOnce } from './split.js';
import type { FinishOptions, ReplyWriterOptions, WriterResult } from './reply-writer-options.js';

export type { FinishOptions, ReplyWriterOptions, WriterResult } from './reply-writer-options.js';

// Shows one reply on the platform while its text grows: nothing before there is non-whitespace
// text; the first text posted at once; then edits of the message at most once per edit interval,
// each carrying everything that arrived meanwhile, the next only after the previous finished; one
// final write per message; continuation in a new message when the text outgrows the message (cut
// by split.ts) or the message grows too old. Every write goes through the one scheduler.

interface MessageState {
  id: string | undefined;
  sent: string;
  final: boolean;
  lastWriteAt: number;
  createdAt: number;
}

const freshMessage = (): MessageState => ({ id: undefined, sent: '', final: false, lastWriteAt: 0, createdAt: 0 });
const hasText = (s: string) => /\S/.test(s);

export class ReplyWriter {
  private readonly o: ReplyWriterOptions;
  private appended = '';
  private prefix = '';
  private contentStarted = false;
  private msgStart = 0;
  private carry = '';
  private msg = freshMessage();
  private part = 0;
  private readonly messageIds: string[] = [];
  private ending = false;
  private fatal: unknown;
  private retries = 0;
  private running: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private working: Promise<void> = Promise.resolve();
  private firstShown = false;
  private yielded = false;
  /** Where the note appended by finish() starts in content(): a cut never falls inside it. */
  private noteAt: number | undefined;
  /** Aborts an intermediate edit still waiting for budget when the reply ends (the final replaces it). */
  private pendingEdit: AbortController | undefined;
  /** Budget held for this reply's final write while it streams (see WriteScheduler.hold). */
  private releaseHold: (() => void) | undefined;
  /** Set by finish(): the reply's last write shows feedback buttons. */
  private feedback = false;

  constructor(opts: ReplyWriterOptions) {
    this.o = opts;
  }

  /** Show the working indicator (not awaited: it must not delay the upstream request). */
  start(): void {
    this.working = this.o.sink.showWorking().catch(() => {});
  }

  append(delta: string): void {
    if (this.ending || delta === '') return;
    this.appended += delta;
    if (!this.contentStarted && hasText(this.appended)) {
      this.contentStarted = true;
      this.prefix = this.o.prefix?.() ?? '';
    }
    this.kick();
  }

  /** End the reply: the last write of the last message, then resolve. */
  async finish(opts: FinishOptions = {}): Promise<WriterResult> {
    if (!this.ending) {
      this.ending = true;
      this.feedback = opts.feedback === true;
      // An edit still queued for budget would show stale text and then need another write: drop
      // it, so the loop makes the final write now, with the final's priority.
      this.pendingEdit?.abort();
      if (this.contentStarted) {
        // A code block the cut left open is closed first, so that the note is not shown as code.
        if (opts.note !== undefined) {
          this.appended += fenceCloser(this.content());
          this.noteAt = this.content().length;
          this.appended += opts.note;
        }
      } else {
        const text = opts.replacement ?? opts.note?.trimStart();
        if (text !== undefined && hasText(text)) {
          this.appended = text;
          this.contentStarted = true;
        }
      }
    }
    this.kick();
    // The loop may restart itself once (text that came in while it was finishing).
    for (let i = 0; i < 100 && this.running !== undefined; i++) await this.running;
    if (!this.firstShown) await this.working.then(() => this.o.sink.clearWorking()).catch(() => {});
    this.releaseHold?.();
    const result: WriterResult = { messageIds: [...this.messageIds], text: this.content() };
    if (this.fatal !== undefined) result.error = this.fatal;
    return result;
  }

  private content(): string {
    return this.contentStarted ? this.prefix + this.appended : '';
  }

  private limit(desired: string): number {
    // While streaming, keep room for a note, and for closing a code block left open before it:
    // the final write may use both, and the note then never has to be split off on its own.
    const reserve = this.ending ? 0 : (this.o.reserveChars ?? 0) + fenceCloser(desired).length;
    return Math.max(1, this.o.sink.maxChars - reserve);
  }

  private kick(): void {
    if (this.running === undefined) {
      this.running = this.run().finally(() => {
        this.running = undefined;
        // Text may have arrived while the loop was finishing.
        if (this.needsWork()) this.kick();
      });
    } else {
      this.wake?.();
    }
  }

  private needsWork(): boolean {
    if (this.fatal !== undefined) return false;
    const body = this.content().slice(this.msgStart);
    if (this.ending) {
      if (!hasText(body)) return this.msg.id !== undefined && !this.msg.final;
      const unchanged = this.carry + body === this.msg.sent;
      // The last edit already shows the whole text: a final write would change nothing a user
      // sees, unless the sink needs the signal itself.
      return !(unchanged && (this.msg.final || !this.o.sink.needsFinalWrite));
    }
    return hasText(body) && this.carry + body !== this.msg.sent;
  }

  private async run(): Promise<void> {
    // Bounded: every pass writes, sleeps until a deadline, waits for new input, or moves past
    // text (a whitespace-only cut, the one yield before a post).
    while (this.fatal === undefined) {
      const body = this.content().slice(this.msgStart);
      const desired = this.carry + body;
      const limit = this.limit(desired);

      if (desired.length > limit) {
        // A part must hold some text besides whitespace: platforms refuse a message (or an edit)
        // that is only whitespace, so a cut may not leave one behind.
        const lead = /^\s*/.exec(desired.slice(this.carry.length))?.[0].length ?? 0;
        const noteCut = this.noteAt === undefined ? undefined : this.carry.length + this.noteAt - this.msgStart;
        const cut =
          splitOnce(
            desired,
            limit,
            this.carry.length + lead,
            noteCut !== undefined && noteCut > this.carry.length + lead ? noteCut : undefined,
          ) ?? cutAt(desired, limit);
        if (this.msg.id === undefined && !hasText(cut.head)) {
          // Only whitespace before the break (a line end between two parts): no message of its
          // own, which platforms refuse as empty; the text goes on after it.
          this.msgStart += cut.consumed - this.carry.length;
          this.carry = cut.reopen;
          continue;
        }
        if (!(await this.writeWhenDue(cut.head, true))) continue;
        this.msgStart += cut.consumed - this.carry.length;
        this.carry = cut.reopen;
        this.nextMessage();
        continue;
      }

      if (this.ending) {
        if (!this.needsWork()) return;
        if (!(await this.writeWhenDue(desired, true, true))) continue;
        return;
      }

      const rolloverAt = this.rolloverAt();
      if (rolloverAt !== undefined && this.o.clock.now() >= rolloverAt) {
        const cut = cutAt(desired, desired.length, this.carry.length);
        if (!(await this.writeWhenDue(cut.head, true))) continue;
        this.msgStart += cut.consumed - this.carry.length;
        this.carry = cut.reopen;
        this.nextMessage();
        continue;
      }

      if (hasText(body) && desired !== this.msg.sent) {
        if (this.msg.id === undefined && !this.yielded) {
          // Let the event loop turn once before a post: deltas and the end that arrived together
          // (a reply sent whole) then make one final post instead of a post and an edit.
          this.yielded = true;
          await new Promise<void>((resolve) => setImmediate(resolve));
          continue;
        }
        this.yielded = false;
        await this.writeWhenDue(desired, false);
        continue;
      }
      await this.waitForInput(rolloverAt);
    }
  }

  /** A message that must be finished before the sink's maximum age. */
  private rolloverAt(): number | undefined {
    const maxAge = this.o.sink.maxMessageAgeMs;
    if (maxAge === undefined || this.msg.id === undefined || this.msg.final) return undefined;
    return this.msg.createdAt + Math.max(0, maxAge - this.o.editIntervalMs);
  }

  /** Write once the message's edit interval has passed. False: nothing written (retry). */
  private async writeWhenDue(text: string, final: boolean, last = false): Promise<boolean> {
    if (this.msg.id !== undefined) {
      const due = this.msg.lastWriteAt + this.o.editIntervalMs;
      const now = this.o.clock.now();
      // Sleep, then let the loop recompute: text that arrived meanwhile joins this write.
      if (now < due) {
        await this.sleep(due - now);
        return false;
      }
    }
    return this.write(text, final, last);
  }

  private async write(text: string, final: boolean, last: boolean): Promise<boolean> {
    const { sink, scheduler, clock, platform, metrics } = this.o;
    const op = this.msg.id === undefined ? 'post' : 'edit';
    const priority: WritePriority = final ? 'final' : op === 'post' ? 'first' : 'edit';
    const pending = priority === 'edit' ? new AbortController() : undefined;
    this.pendingEdit = pending;
    let grant: WriteGrant;
    try {
      grant = await scheduler.acquire(sink.buckets(op), priority, pending?.signal);
    } catch {
      return false; // an edit overtaken by the end of the reply, or the scheduler was closed
    } finally {
      if (this.pendingEdit === pending) this.pendingEdit = undefined;
    }
    const startedAt = clock.now();
    let result: WriteResult;
    try {
      const opts: WriteOptions = { final, part: this.part };
      if (this.o.replyKey !== undefined) opts.replyKey = this.o.replyKey;
      if (last) {
        opts.last = true;
        if (this.feedback) opts.feedback = true;
      }
      if (this.msg.id === undefined) {
        const posted = await sink.post(text, opts);
        this.msg.id = posted.messageId;
        this.msg.createdAt = startedAt;
        // From the first message on, the reply will need a final edit: hold budget for it.
        if (this.releaseHold === undefined && !this.ending) {
          this.releaseHold = scheduler.hold(sink.buckets('edit'));
        }
        this.messageIds.push(posted.messageId);
        result = posted;
      } else {
        // Recorded before the edit: a crash between the platform applying it and a record after
        // it would make the repair roll the message back to older text.
        this.recordProgress(text);
        result = await sink.edit(this.msg.id, text, opts);
      }
    } catch (err) {
      grant.done();
      await this.onWriteError(err);
      return false;
    }
    grant.done();
    this.retries = 0;
    for (const info of result.rateLimits ?? []) scheduler.observe(info);
    metrics.platformWrite(platform, op === 'edit' ? 'edit' : this.part > 0 ? 'continuation' : 'post');
    this.msg.sent = text;
    this.msg.final = final;
    this.msg.lastWriteAt = startedAt;
    if (!this.firstShown) {
      this.firstShown = true;
      const at = clock.now();
      void this.working.then(() => sink.clearWorking()).catch(() => {});
      if (this.o.receivedAt !== undefined)
        metrics.platformFirstText(platform, Math.max(0, at - this.o.receivedAt) / 1000);
      this.o.onFirstText?.(at);
    }
    // A post is recorded once its message id is known (an edit was recorded before it was sent).
    if (op === 'post') this.recordProgress(text);
    return true;
  }

  private recordProgress(text: string): void {
    try {
      this.o.progress?.([...this.messageIds], text);
    } catch (err) {
      // Losing a progress record only weakens crash repair; the reply itself goes on.
      this.o.logger.warn({ err }, 'could not record reply progress');
    }
  }

  private async onWriteError(err: unknown): Promise<void> {
    const { scheduler, metrics, platform, logger } = this.o;
    if (err instanceof PlatformRateLimitedError) {
      // The scheduler holds the bucket; the loop retries with whatever text is current then.
      scheduler.limited(err.bucket, err.retryAfterMs);
      metrics.platformRateLimited(platform, err.bucket);
      logger.warn({ bucket: err.bucket, retryAfterMs: err.retryAfterMs }, 'platform rate limit hit');
      return;
    }
    if (err instanceof PlatformWriteError && err.retryable && this.retries < (this.o.maxWriteRetries ?? 3)) {
      this.retries++;
      logger.warn({ code: err.code, attempt: this.retries }, 'platform write failed, retrying');
      await this.sleep((this.o.retryBaseMs ?? 500) * 2 ** (this.retries - 1));
      return;
    }
    this.fatal = err;
    const code = err instanceof PlatformWriteError ? err.code : undefined;
    logger.error(
      { code, err: err instanceof Error ? err.message : String(err) },
      'platform write failed; reply abandoned',
    );
    this.o.onFatal?.(err);
  }

  private nextMessage(): void {
    this.msg = freshMessage();
    this.part++;
  }

  /** Nothing cuts a sleep short: new text and the end of the reply wait out the interval (or backoff). */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.o.clock.setTimeout(resolve, ms);
    });
  }

  private waitForInput(until: number | undefined): Promise<void> {
    return new Promise((resolve) => {
      const t =
        until === undefined
          ? undefined
          : this.o.clock.setTimeout(() => done(), Math.max(0, until - this.o.clock.now()));
      const done = () => {
        t?.clear();
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
    });
  }
}
