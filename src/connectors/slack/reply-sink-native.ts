import type { BucketRef, PostResult, ReplySink, WriteOptions, WriteResult } from '../../core/ports.js';
import { TaskTimeline, showsImage } from './agent-view.js';
import { withAgentSession } from './agent-sessions.js';
import { createWorkingIndicator, type SinkDeps, type SlackDestination } from './destination.js';
import { findStarted, isUncertain, readShown } from './failed-writes.js';
import { createFileUploads, uploadsBytes } from './file-uploads.js';
import { orStep, postMarkdown, postOverflowParts, replaceByEdit } from './native-fallback.js';
import {
  appendToStream,
  fallBackFromStream,
  type NativeContext,
  type NativeMessage,
  nativeContext,
  startStream,
  stopStream,
} from './native-stream.js';
import { slackErrorCode, translateSlackError } from './rate-limits.js';
import { renderMarkdownText, stablePrefixEnd } from './render.js';
import { replyTarget } from './reply-sink-edit.js';
import { streamView } from './stream-tables.js';

// Native streaming: each message of the reply is a Slack stream (native-stream.ts). The pump
// gives the full text of the current message each time; this sink remembers what each message
// already shows and appends the rest, then stops the stream on the message's final write. When a
// stream method fails the message goes on by edits (native-fallback.ts), and once a stream's start
// failed so does the rest of the reply.

export const NATIVE_MAX_CHARS = 11_000;
/** Slack stops accepting appends after about 5 minutes; the pump rolls over before. */
export const NATIVE_MAX_MESSAGE_AGE_MS = 270_000;

export function createNativeSink(dest: SlackDestination, deps: SinkDeps): ReplySink {
  const ctx = nativeContext(dest, deps);
  const reply = new NativeReply(ctx);
  const working = createWorkingIndicator(dest, deps);
  const uploads = createFileUploads(dest.client, { channel: ctx.channel, threadTs: ctx.threadTs }, deps.logger);
  return withAgentSession(deps.session, {
    maxChars: NATIVE_MAX_CHARS,
    maxMessageAgeMs: NATIVE_MAX_MESSAGE_AGE_MS,
    // stopStream ends the stream, and words held back while streaming are sent with it.
    needsFinalWrite: true,
    target: replyTarget(dest, 'native'),
    buckets: (op) => reply.buckets(op),
    showWorking: () => working.show(),
    clearWorking: () => working.clear(),
    // An agent's steps: the stream's task timeline, and the assistant status before it starts.
    showsSteps: true,
    showStep: (step) => working.step(step),
    showsFile: (f) => showsImage(f) || uploadsBytes(f),
    // Files sent as bytes go up first; one Slack refused is named under the text.
    post: async (markdown, opts) => reply.post(markdown + (await uploads.before(opts)), opts),
    edit: async (messageId, markdown, opts) => reply.edit(messageId, markdown + (await uploads.before(opts)), opts),
  });
}

/** One native reply's state: its messages, and what went wrong that its next writes must know. */
class NativeReply {
  /** Every message this reply made, by ts. */
  private readonly messages = new Map<string, NativeMessage>();
  /** After chat.startStream failed, every later message of this reply is posted and edited. */
  private streamsFailed = false;
  /** The message the pump writes to now (the last posted): its edits' bucket follows its mode. */
  private current: NativeMessage | undefined;
  /** The newest message of this reply: a lost later start can only be after it. */
  private lastTs: string | undefined;
  /** The part whose start (or post) lost its answer: its next attempt first looks for the message. */
  private uncertainPart: number | undefined;
  /** A part whose stream started but whose final write failed: its retry finishes that message. */
  private startedPart: { part: number; ts: string } | undefined;

  constructor(private readonly ctx: NativeContext) {}

  /**
   * chat.postMessage and chat.startStream share the channel's post bucket; a stream's start also
   * pays its Tier 2 bucket. Edits go by chat.appendStream until the current message fell back to
   * chat.update (a stream call failed, or its shown text had to be replaced): from then on they
   * count against update.
   */
  buckets(op: 'post' | 'edit'): BucketRef[] {
    const b = this.ctx.buckets;
    if (op === 'post') {
      const posting = this.streamsFailed ? [b.post] : [b.post, b.start];
      // After a lost start the next one may read the thread and finish the message by an update.
      return this.uncertainPart !== undefined ? [...posting, b.history, b.update] : posting;
    }
    if (this.current?.appendUncertain !== undefined) return [b.append, b.history];
    return this.streamsFailed || this.current?.edited === true ? [b.update, b.channelUpdate] : [b.append];
  }

  async post(text: string, opts: WriteOptions): Promise<PostResult> {
    const started = this.startedPart;
    if (started?.part === opts.part) {
      // The stream started; its final write failed: finish that message, start no other.
      return this.finishPart(opts.part, started.ts, () => this.edit(started.ts, text, opts));
    }
    if (this.uncertainPart === opts.part) {
      const adopted = await this.adoptLost(text, opts);
      this.uncertainPart = undefined;
      if (adopted !== undefined) return adopted;
    }
    if (this.streamsFailed) return this.postByEdits(text, opts);
    return this.start(text, opts);
  }

  async edit(ts: string, text: string, opts: WriteOptions): Promise<WriteResult> {
    const msg = this.messages.get(ts);
    if (msg === undefined) {
      // Not made by this sink (a restart): an edit is all that is possible.
      const unknown = { shown: '', streaming: false, edited: true, timeline: new TaskTimeline() };
      return this.byEdit(ts, unknown, text, opts);
    }
    if (msg.streaming && this.ctx.deps.session?.streamStopped?.(this.ctx.channel, ts) === true) {
      // Slack stopped this stream (agent_session_stopped named it): an append would fail with
      // message_not_in_streaming_state, so the message is finished by an edit right away.
      msg.streaming = false;
      return this.byEdit(ts, msg, text, opts);
    }
    if (msg.edited) return this.byEdit(ts, msg, text, opts);
    const done = await this.appendNew(ts, msg, text, opts);
    if (done !== undefined) return done;
    if (opts.final && msg.streaming) return this.end(ts, msg, text, opts);
    return this.ctx.ladder.take();
  }

  /** A new message as a stream; should its start fail other than by a lost answer, by edits. */
  private async start(text: string, opts: WriteOptions): Promise<PostResult> {
    const view = streamView(text, opts.final);
    let started: { ts: string; timeline: TaskTimeline };
    try {
      started = await startStream(this.ctx, view, opts.steps);
    } catch (err) {
      const translated = translateSlackError(err, this.ctx.buckets.start.key);
      if (isUncertain(translated)) {
        // It may have started: the next attempt looks for it before starting another.
        this.uncertainPart = opts.part;
        throw translated;
      }
      fallBackFromStream(this.ctx, err, this.ctx.buckets.start);
      this.streamsFailed = true;
      return this.postByEdits(text, opts);
    }
    const { ts, timeline } = started;
    this.track(ts, { shown: view.shown, streaming: true, edited: false, timeline });
    if (!opts.final) return { messageId: ts, ...this.ctx.ladder.take() };
    return this.finishPart(opts.part, ts, () => this.edit(ts, text, opts));
  }

  /**
   * Appends what is new and stable in `text` to message `ts`'s stream. Undefined: appended (or
   * nothing new), the stream goes on; else the write's result (replaced by an edit, or nothing).
   */
  private async appendNew(
    ts: string,
    msg: NativeMessage,
    text: string,
    opts: WriteOptions,
  ): Promise<WriteResult | undefined> {
    const committed = opts.final ? text : text.slice(0, stablePrefixEnd(text));
    // Its table as a marker (stream-tables.ts): sent as a table block, in place.
    const view = streamView(committed, opts.final);
    if (!view.shown.startsWith(msg.shown)) {
      // The text changed in what was already shown: only a full replacement is right.
      if (!opts.final && msg.shown.startsWith(view.shown)) return {}; // nothing new is stable yet
      return this.byEdit(ts, msg, text, opts);
    }
    if (msg.appendUncertain !== undefined) {
      // An append whose answer was lost: what the message shows says whether it took effect.
      const now = await this.readShown(ts);
      if (now === msg.appendUncertain) msg.shown = now;
      delete msg.appendUncertain;
      // It shows something else, or the text changed in what it shows: only a replacement is right.
      if (now !== msg.shown || !view.shown.startsWith(msg.shown)) return this.byEdit(ts, msg, text, opts);
    }
    const bucket = this.ctx.buckets.append;
    try {
      await appendToStream(this.ctx, ts, msg, view, opts.steps);
    } catch (err) {
      const e = translateSlackError(err, bucket.key);
      if (isUncertain(e)) {
        // The chunk may show already: the next write reads the message before appending again.
        msg.appendUncertain = view.shown;
        throw e;
      }
      fallBackFromStream(this.ctx, err, bucket);
      // Refused (not in streaming state, ...): the edit replaces the whole text.
      return this.byEdit(ts, msg, text, opts);
    }
    return undefined;
  }

  /** What message `ts` shows now (a read of the thread, paid from the history bucket). */
  private async readShown(ts: string): Promise<string | undefined> {
    try {
      return await readShown(this.ctx.dest, ts);
    } catch (err) {
      throw translateSlackError(err, this.ctx.buckets.history.key);
    }
  }

  /** The message's final write ends its stream (native-stream.ts stopStream). */
  private async end(ts: string, msg: NativeMessage, text: string, opts: WriteOptions): Promise<WriteResult> {
    const bucket = this.ctx.buckets.stop;
    try {
      await stopStream(this.ctx, ts, msg.timeline, opts);
      msg.streaming = false;
    } catch (err) {
      if (msg.endUncertain === true && slackErrorCode(err) === 'message_not_in_streaming_state') {
        // The stop whose answer was lost took effect, with its buttons: nothing is left to do.
        msg.streaming = false;
        return this.ctx.ladder.take();
      }
      const e = translateSlackError(err, bucket.key);
      if (isUncertain(e)) {
        // It may have stopped: its repeat tells (an edit instead would lose the feedback buttons).
        msg.endUncertain = true;
        throw e;
      }
      fallBackFromStream(this.ctx, err, bucket);
      return this.byEdit(ts, msg, text, opts);
    }
    return this.ctx.ladder.take();
  }

  /**
   * After a start or post whose answer was lost: the message it made, if any, finished by edits
   * (its stream stopped, its text replaced): a second stream is never started beside it.
   */
  private async adoptLost(text: string, opts: WriteOptions): Promise<PostResult | undefined> {
    let found: { ts: string; text: string | undefined } | undefined;
    try {
      found = await findStarted(
        this.ctx.dest,
        this.lastTs ?? this.ctx.dest.userMessageTs,
        new Set(this.messages.keys()),
      );
    } catch (err) {
      throw translateSlackError(err, this.ctx.buckets.history.key);
    }
    if (found === undefined) return undefined;
    this.ctx.deps.logger.info('Slack stream start whose answer was lost found; continuing in it');
    const { ts } = found;
    // A stream that shows the start of this text goes on streaming (its stop carries the buttons);
    // anything else is finished by edits.
    const streaming =
      !this.streamsFailed && found.text !== undefined && renderMarkdownText(text).startsWith(found.text);
    const timeline = new TaskTimeline();
    const msg: NativeMessage = streaming
      ? { shown: found.text ?? '', streaming: true, edited: false, timeline }
      : { shown: '', streaming: !this.streamsFailed, edited: true, timeline };
    this.track(ts, msg);
    // Found: if the write below fails, the post's retry finishes this message (never looks again).
    this.uncertainPart = undefined;
    return this.finishPart(opts.part, ts, () =>
      streaming ? this.edit(ts, text, opts) : this.byEdit(ts, msg, text, opts),
    );
  }

  /** A new message posted, not streamed (streams failed): it is edited from then on. */
  private async postByEdits(text: string, opts: WriteOptions): Promise<PostResult> {
    const shown = orStep(text, opts);
    try {
      const { ts, overflow } = await postMarkdown(this.ctx, shown, opts.final);
      this.track(ts, {
        shown: renderMarkdownText(shown),
        streaming: false,
        edited: true,
        timeline: new TaskTimeline(),
      });
      await postOverflowParts(this.ctx, ts, overflow);
      return { messageId: ts, ...this.ctx.ladder.take() };
    } catch (err) {
      const e = translateSlackError(err, this.ctx.buckets.post.key);
      if (isUncertain(e)) this.uncertainPart = opts.part;
      throw e;
    }
  }

  /** Message `ts`'s whole text replaced by an edit (native-fallback.ts). */
  private byEdit(ts: string, msg: NativeMessage, text: string, opts: WriteOptions): Promise<WriteResult> {
    return replaceByEdit(this.ctx, ts, msg, orStep(text, opts), opts.final);
  }

  /**
   * The write that finishes part `part` in message `ts`, whose stream exists: should it fail, the
   * part's retry finishes this message (post, startedPart), never starts another.
   */
  private async finishPart(part: number, ts: string, write: () => Promise<WriteResult>): Promise<PostResult> {
    this.startedPart = { part, ts };
    const written = await write();
    this.startedPart = undefined;
    return { messageId: ts, ...written };
  }

  /** A message of this reply is in the thread now (posted, started, or found after a lost answer). */
  private track(ts: string, msg: NativeMessage): void {
    this.messages.set(ts, msg);
    this.current = msg;
    this.lastTs = ts;
    this.ctx.deps.onPosted?.(this.ctx.channel, this.ctx.threadTs);
  }
}
