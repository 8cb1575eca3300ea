import { randomBytes } from 'node:crypto';
import { DiscordAPIError, type REST, type RequestData, Routes } from 'discord.js';
import { multipartBody } from './multipart-body.js';
import { fileLine } from '../../core/reply/agent-work.js';
import type {
  AgentFile,
  BucketRef,
  Place,
  PostResult,
  RefusalChannel,
  ReplySink,
  ReplyTarget,
  WriteOptions,
  WriteResult,
} from '../../core/ports.js';
import type { Logger } from '../../logger.js';
import type { MonospaceOptions } from '../../core/reply/tables.js';
import { discordCode, THREAD_ALREADY_CREATED, toPlatformError } from './errors.js';
import type { ThreadFromMessage } from './events.js';
import { type BucketBudget, channelBucket, GLOBAL_REPLY_BUCKET } from './rate-limits.js';
import { imageEmbeds, showsImage, withStepLine } from './agent-view.js';
import { replyComponents } from './controls.js';
import {
  type Body,
  createPlainFallback,
  DISCORD_MAX_CHARS,
  DISCORD_TABLES,
  type PlainFallback,
} from './plain-fallback.js';

// A reply in a channel, thread or DM: plain message create + edit over REST. In thread mode the
// thread is opened lazily from the user's message (its id is the message id), so nothing is made
// for a message the relay refuses, and a second attempt after a crash finds it already there.

export { DISCORD_MAX_CHARS, DISCORD_TABLES } from './plain-fallback.js';
/** Discord shows "typing" for 10 s; renew a little before it lapses. */
const TYPING_RENEW_MS = 8000;
/** Never type forever, even if clearWorking is never called. */
const TYPING_MAX_MS = 5 * 60_000;

/**
 * A create whose answer is lost (a cut connection, a timeout, a 5xx) may have made the message:
 * every create carries a nonce Discord enforces (`enforce_nonce`), unique per message of a reply and
 * the same on every attempt of it (discord.js's own retries resend the same body), so a repeat
 * returns the message the first attempt made instead of making a second one.
 */
export function createNonces(): (what: string | number) => string {
  // 12 characters of randomness plus the part: well under Discord's 25.
  const base = randomBytes(9).toString('base64url');
  return (what) => `${base}.${what}`;
}

/** The body fields that make a create safe to repeat (see createNonces). */
export function nonceFields(nonce: string): { nonce: string; enforce_nonce: true } {
  return { nonce, enforce_nonce: true };
}

/** Upstream text must never ping anyone: sent on every create and edit (edits re-parse otherwise). */
export const NO_MENTIONS = { parse: [] as string[] };

/**
 * An edit of a reply's message: its text (with the running step's line while it streams), no
 * pings, its buttons (Stop, votes) when it has any, the images of its last write.
 */
export function editBody(text: string, opts: WriteOptions): Record<string, unknown> {
  const components = replyComponents(opts);
  const embeds = imageEmbeds(opts.files);
  return {
    content: withStepLine(text, opts.steps),
    allowed_mentions: NO_MENTIONS,
    ...(components !== undefined ? { components } : {}),
    ...(embeds !== undefined ? { embeds } : {}),
  };
}

/** Where a place's replies are written: its thread (thread mode, or a thread the user wrote in), else its channel. */
export function replyChannelId(place: Place): string {
  return place.threadId ?? place.channelId;
}

export interface ChannelSinkInit {
  rest: REST;
  logger: Logger;
  /** The conversation's place; the messages go to replyChannelId(place). */
  place: Place;
  /** Inline mode: the user's message, referenced by the reply's first message. */
  replyTo?: { channelId: string; messageId: string };
  /** Thread mode: open this thread before the first write. */
  startThread?: ThreadFromMessage;
  budget?: BucketBudget;
}

export class ChannelReplySink implements ReplySink {
  readonly maxChars = DISCORD_MAX_CHARS;
  /** A message that carried a Stop button needs its final write, even with the text unchanged. */
  readonly needsFinalWrite = true;
  /** Discord has no table: aligned code blocks, by display width (CJK, emoji), cut by columns to fit a message. */
  readonly monospaceTables: MonospaceOptions = DISCORD_TABLES;
  /** The running step shows as a `-#` line under the text (agent-view.ts). */
  readonly showsSteps = true;
  readonly showsFile = (f: AgentFile): boolean => showsImage(f) || uploadsBytes(f);
  readonly target: ReplyTarget;
  private readonly channelId: string;
  private readonly bucket: BucketRef;
  private thread: Promise<void> | undefined;
  private typingTimer: NodeJS.Timeout | undefined;
  private typingStartedAt = 0;
  /** A form Discord refused: the reply's words go on as plain content (plain-fallback.ts). */
  private readonly plain: PlainFallback;
  /** A plain final write's extra parts already posted, by the message they follow. */
  private readonly overflowPosted = new Map<string, string[]>();
  private readonly nonce = createNonces();
  /**
   * Creates this sink made (posts, and notices apart): each new create takes the next nonce, and a
   * create tried again after its answer was lost keeps its own, so Discord returns the first
   * message. A number per create, not per part: a notice and a reply both post a part 0.
   */
  private posts = 0;
  private notices = 0;
  /** The post (by number) sent at least once: a repeat may get the first message back. */
  private triedPost = -1;
  /** Discord refused this reply's file uploads: later writes name the files instead. */
  private filesRefused = false;

  constructor(private readonly init: ChannelSinkInit) {
    this.target = { place: init.place };
    this.channelId = replyChannelId(init.place);
    this.bucket = channelBucket(this.channelId, init.budget);
    this.plain = createPlainFallback(init.logger);
  }

  buckets(_op: 'post' | 'edit'): BucketRef[] {
    return [this.bucket, GLOBAL_REPLY_BUCKET];
  }

  /**
   * A refusal (per-user limit, busy) is public here (only interactions can answer ephemerally):
   * a reply to the user's message where it was written. It never opens the thread of thread mode.
   */
  get refusal(): RefusalChannel {
    const spec = this.init.startThread;
    const channelId = spec?.parentId ?? this.channelId;
    const ref = spec !== undefined ? { channelId: spec.parentId, messageId: spec.messageId } : this.init.replyTo;
    const bucket = spec !== undefined ? channelBucket(spec.parentId, this.init.budget) : this.bucket;
    return {
      private: false,
      buckets: [bucket, GLOBAL_REPLY_BUCKET],
      send: async (text) => {
        const body: Record<string, unknown> = {
          content: text,
          allowed_mentions: NO_MENTIONS,
          ...nonceFields(this.nonce(`n${this.notices}`)),
        };
        if (ref !== undefined) {
          body.message_reference = { message_id: ref.messageId, channel_id: ref.channelId, fail_if_not_exists: false };
        }
        try {
          await this.init.rest.post(Routes.channelMessages(channelId), { body });
          this.notices += 1;
          return {};
        } catch (err) {
          throw toPlatformError(err, bucket.key);
        }
      },
    };
  }

  async showWorking(): Promise<void> {
    try {
      await this.ensureThread();
    } catch (err) {
      this.init.logger.warn(
        { err: toPlatformError(err, this.bucket.key).message },
        'discord: could not open the thread',
      );
      return;
    }
    if (this.typingTimer) return;
    this.typingStartedAt = Date.now();
    void this.typeOnce();
    this.typingTimer = setInterval(() => {
      if (Date.now() - this.typingStartedAt > TYPING_MAX_MS) void this.clearWorking();
      else void this.typeOnce();
    }, TYPING_RENEW_MS);
    this.typingTimer.unref();
  }

  async clearWorking(): Promise<void> {
    if (this.typingTimer) clearInterval(this.typingTimer);
    this.typingTimer = undefined;
  }

  async post(markdown: string, opts: WriteOptions): Promise<PostResult> {
    try {
      await this.ensureThread();
      return await this.withFiles(markdown, opts, (text, files) => this.create(text, opts, files));
    } catch (err) {
      throw toPlatformError(err, this.bucket.key);
    }
  }

  private async create(text: string, opts: WriteOptions, files: RawFile[] | undefined): Promise<PostResult> {
    const body: Record<string, unknown> = {
      content: withStepLine(text, opts.steps),
      allowed_mentions: NO_MENTIONS,
      ...nonceFields(this.nonce(this.posts)),
    };
    const components = replyComponents(opts);
    if (components !== undefined) body.components = components;
    const embeds = imageEmbeds(opts.files);
    if (embeds !== undefined) body.embeds = embeds;
    if (opts.part === 0 && this.init.replyTo) {
      body.message_reference = {
        message_id: this.init.replyTo.messageId,
        channel_id: this.init.replyTo.channelId,
        fail_if_not_exists: false,
      };
    }
    const again = this.triedPost === this.posts;
    this.triedPost = this.posts;
    if (files !== undefined) body.attachments = attachmentsOf(files);
    const { value: res, overflow } = await this.plain.send(body, false, async (b) => {
      const made = (await this.init.rest.post(Routes.channelMessages(this.channelId), withParts(b, files))) as {
        id: string;
        content?: string;
        components?: unknown[];
      };
      const content = typeof b.content === 'string' ? b.content : text;
      const sent = Array.isArray(b.components) ? (b.components as unknown[]) : undefined;
      if (again && (made.content !== content || customIds(made.components) !== customIds(sent))) {
        // A repeat of a create whose answer was lost: Discord answered with the first message, as
        // it was then. It gets this write's text and buttons (an edit is safe to repeat).
        await this.init.rest.patch(Routes.channelMessage(this.channelId, made.id), {
          body: { content, allowed_mentions: NO_MENTIONS, components: sent ?? [] },
        });
      }
      return made;
    });
    this.posts += 1;
    if (opts.final) await this.postOverflow(res.id, overflow);
    return { messageId: res.id, ...this.plain.take() };
  }

  async edit(messageId: string, markdown: string, opts: WriteOptions): Promise<WriteResult> {
    try {
      return await this.withFiles(markdown, opts, async (text, files) => {
        const body = editBody(text, opts);
        if (files !== undefined) body.attachments = attachmentsOf(files);
        const { overflow } = await this.plain.send(body, true, (b) =>
          this.init.rest.patch(Routes.channelMessage(this.channelId, messageId), withParts(b, files)),
        );
        if (opts.final) await this.postOverflow(messageId, overflow);
        return this.plain.take();
      });
    } catch (err) {
      throw toPlatformError(err, this.bucket.key);
    }
  }

  /**
   * A last write with files the upstream sent as bytes carries them as attachments (multipart).
   * Discord refusing them (too large, 40005; a bad form) sends the write again at once without
   * them, each named in a line under the text; this reply tries no upload again.
   */
  private async withFiles<T>(
    text: string,
    opts: WriteOptions,
    send: (text: string, files: RawFile[] | undefined) => Promise<T>,
  ): Promise<T> {
    const bytes = (opts.files ?? []).filter(uploadsBytes);
    if (bytes.length === 0) return send(text, undefined);
    const named = () =>
      `${text}\n\n${bytes.map((f) => fileLine({ name: f.name, ...(f.size !== undefined ? { size: f.size } : {}) })).join('\n')}`;
    if (this.filesRefused) return send(named(), undefined);
    try {
      return await send(text, bytes.map(rawFile));
    } catch (err) {
      if (!(err instanceof DiscordAPIError) || (err.status !== 413 && err.status !== 400)) throw err;
      this.filesRefused = true;
      this.init.logger.warn({ code: err.code, status: err.status }, 'discord: files refused; naming them instead');
      return send(named(), undefined);
    }
  }

  /** A plain final write's parts beyond the first, after it; on a retry, edited rather than posted twice. */
  private async postOverflow(anchor: string, parts: readonly string[]): Promise<void> {
    if (parts.length === 0) return;
    const done = this.overflowPosted.get(anchor) ?? [];
    this.overflowPosted.set(anchor, done);
    for (const [i, content] of parts.entries()) {
      const body: Body = { content, allowed_mentions: NO_MENTIONS };
      const id = done[i];
      if (id !== undefined) await this.init.rest.patch(Routes.channelMessage(this.channelId, id), { body });
      else {
        const res = (await this.init.rest.post(Routes.channelMessages(this.channelId), { body })) as { id: string };
        done.push(res.id);
      }
    }
  }

  private ensureThread(): Promise<void> {
    const spec = this.init.startThread;
    if (!spec) return Promise.resolve();
    // Memoise success only: a failed attempt (permissions, network) is tried again by the next write.
    this.thread ??= this.openThread(spec).catch((err: unknown) => {
      this.thread = undefined;
      throw err;
    });
    return this.thread;
  }

  private async openThread(spec: ThreadFromMessage): Promise<void> {
    try {
      await this.init.rest.post(Routes.threads(spec.parentId, spec.messageId), {
        body: { name: spec.name, auto_archive_duration: 1440 },
      });
    } catch (err) {
      if (discordCode(err) === THREAD_ALREADY_CREATED) return;
      throw err;
    }
  }

  private async typeOnce(): Promise<void> {
    try {
      await this.init.rest.post(Routes.channelTyping(this.channelId));
    } catch (err) {
      this.init.logger.debug({ err: toPlatformError(err, this.bucket.key).message }, 'discord: typing failed');
    }
  }
}

/** A file as discord.js's REST sends it (a `files[n]` part of a multipart body). */
type RawFile = { name: string; data: Buffer; contentType?: string };

const uploadsBytes = (f: AgentFile): boolean => f.data !== undefined && f.url === undefined;

function rawFile(f: AgentFile): RawFile {
  return {
    name: f.name,
    data: Buffer.from(f.data as Uint8Array),
    ...(f.mime !== undefined ? { contentType: f.mime } : {}),
  };
}

/** A write's request: its JSON body, or with files a multipart body sent as it is. */
function withParts(body: Body, files: RawFile[] | undefined): RequestData {
  if (files === undefined) return { body };
  const form = multipartBody(body, files);
  return { body: form.body, passThroughBody: true, headers: { 'Content-Type': form.contentType } };
}

/** The payload's `attachments`: one entry per file part, by index. */
const attachmentsOf = (files: RawFile[]) => files.map((f, id) => ({ id, filename: f.name }));

/** The buttons a message shows, by their ids (Discord's answer adds fields the request had not). */
function customIds(components: unknown[] | undefined): string {
  return [...JSON.stringify(components ?? []).matchAll(/"custom_id":"([^"]*)"/g)].map((m) => m[1]).join(',');
}
