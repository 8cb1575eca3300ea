import { randomBytes } from 'node:crypto';
import type { webApi } from '@slack/bolt';
import type { BucketRef, PostResult, ReplySink, ReplyTarget, WriteOptions, WriteResult } from '../../core/ports.js';
import { delimiterRow, findTables, splitRow } from '../../core/reply/table-parser.js';
import { replyBlocks, textBlocks } from './controls.js';
import { createFileUploads, uploadsBytes } from './file-uploads.js';
import { escapeMrkdwn, imageBlocks, showsImage, stepBlock, stepWords, withAgentBlocks } from './agent-view.js';
import { createWorkingIndicator, type SinkDeps, type SlackDestination, teamOf } from './destination.js';
import { findPosted, isUncertain } from './failed-writes.js';
import { plainTexts, postOverflow } from './plain-fallback.js';
import { channelUpdateBucket, historyBucket, postBucket, translateSlackError, updateBucket } from './rate-limits.js';
import { createFormLadder, type Form, type FormLadder } from './form-ladder.js';
import { renderMrkdwn } from './render.js';
import { renderWithTables, tableMessage, tableMessageBlocks } from './table-blocks.js';

// Edit mode: the first text is posted in the thread, later text replaces it with chat.update.
// Messages stay under Slack's 4,000-character guidance; the pump continues in a new message.
// Every post carries metadata naming the reply and the part, so that a post whose answer was
// lost can be found (failed-writes.ts). Each write goes in the richest form Slack takes (the
// form ladder, form-ladder.ts, which the native sink uses too).

export const EDIT_MAX_CHARS = 3900;

type ChatPostMessageArguments = webApi.ChatPostMessageArguments;
type ChatUpdateArguments = webApi.ChatUpdateArguments;

export function replyTarget(dest: SlackDestination, mode: 'edit' | 'native'): ReplyTarget {
  return { place: dest.place, data: { mode, ...(dest.enterpriseId ? { enterpriseId: dest.enterpriseId } : {}) } };
}

/**
 * A write's forms, richest first (form-ladder.ts): a final write with a table fitting a table
 * block has it in an attachment; every write has its text in section blocks with the controls
 * (a final one with its tables as monospace blocks; while the reply streams its tables show as
 * text); the plain form is `text` alone, tables as monospace blocks, cut where too long. `text`
 * keeps the whole rendering in the richer forms (notifications, search). `update`: the plain form
 * clears the blocks and attachments an earlier write left (chat.update keeps them otherwise).
 */
function writeForms(text: string, opts: WriteOptions, update: boolean): Form[] {
  // Tables have their own rendering (table-blocks.ts), which a text without one never runs.
  const tables = findTables(text).length > 0;
  // Each form is made only when it is tried: a write Slack takes costs one rendering.
  let renderedOnce: string | undefined;
  const rendered = () => (renderedOnce ??= tables ? renderWithTables(text, renderMrkdwn) : renderMrkdwn(text));
  const rich = opts.final && tables ? tableMessage(text, renderMrkdwn) : undefined;
  // An agent's running step as a context line, the images of the last write (agent-view.ts).
  const withText = /\S/.test(text);
  const step = stepBlock(opts.steps, withText);
  const extra = [...(step !== undefined ? [step] : []), ...imageBlocks(opts.files)];
  const words = stepWords(opts.steps, withText);
  // `text` is the notification's words: a message of steps alone names its step.
  const fallback = () => (withText ? rendered() : escapeMrkdwn(words) || '…');
  const forms: Form[] = [];
  if (rich !== undefined) {
    forms.push({
      level: 0,
      build: () => ({
        args: {
          text: rendered(),
          ...(rich.blocks.length > 0 || update || extra.length > 0 ? { blocks: [...rich.blocks, ...extra] } : {}),
          attachments: [{ blocks: replyBlocks(rendered(), opts, rich.attachment) ?? rich.attachment }],
        },
      }),
    });
  }
  forms.push({
    level: 1,
    build: () => {
      const tableBlocks = opts.final && tables ? tableMessageBlocks(text, renderMrkdwn) : undefined;
      // No text yet (steps alone): no section, which Slack refuses empty.
      let blocks = replyBlocks(rendered(), opts, tableBlocks ?? (withText ? undefined : []));
      if (extra.length > 0) blocks = withAgentBlocks(blocks ?? textBlocks(rendered()), extra);
      return {
        args: {
          text: fallback(),
          ...(blocks !== undefined ? { blocks } : {}),
          ...(update && rich !== undefined ? { attachments: [] } : {}),
        },
      };
    },
  });
  forms.push({
    level: 2,
    build: () => {
      const [first = '…', ...rest] = withText ? plainTexts(text) : [];
      const line = words === '' ? '' : `_${escapeMrkdwn(words)}_`;
      const shown = withText ? (line === '' ? first : `${first}\n${line}`) : line || first;
      return {
        args: { text: shown, ...(update ? { blocks: [], attachments: [] } : {}) },
        ...(opts.final && rest.length > 0 ? { overflow: rest } : {}),
      };
    },
  });
  return forms;
}

export function createEditSink(dest: SlackDestination, deps: SinkDeps): ReplySink {
  const reply = new EditReply(dest, deps);
  const working = createWorkingIndicator(dest, deps);
  const uploads = createFileUploads(
    dest.client,
    { channel: dest.place.channelId, threadTs: dest.place.threadId },
    deps.logger,
  );
  return {
    maxChars: EDIT_MAX_CHARS,
    // A message that carried a Stop button needs its final write, even with the text unchanged.
    needsFinalWrite: true,
    // The running step as a context line under the text (agent-view.ts); images as image blocks.
    showsSteps: true,
    showStep: (step) => working.step(step),
    showsFile: (f) => showsImage(f) || uploadsBytes(f),
    target: replyTarget(dest, 'edit'),
    buckets: (op) => reply.buckets(op),
    showWorking: () => working.show(),
    clearWorking: () => working.clear(),
    // Files sent as bytes go up first; one Slack refused is named under the text.
    post: async (markdown, opts) => reply.post(markdown + (await uploads.before(opts)), opts),
    edit: async (messageId, markdown, opts) => reply.edit(messageId, markdown + (await uploads.before(opts)), opts),
  };
}

/** One edit-mode reply's state: its id, the message it posted last, and a post whose answer was lost. */
class EditReply {
  private readonly channel: string;
  private readonly threadTs: string | undefined;
  /** Its writes' buckets; edits count in the channel's share of the workspace's updates too. */
  private readonly bucket: Record<'post' | 'update' | 'channelUpdate' | 'history', BucketRef>;
  private readonly carry = createTableCarry();
  /** A form Slack refused is not sent again by this reply. */
  private readonly ladder: FormLadder;
  /** The plain form's extra parts already posted, by message. */
  private readonly overflowPosted = new Map<string, string[]>();
  private readonly replyId = newReplyId();
  /** The part whose post lost its answer: its next attempt first looks for the message. */
  private uncertainPart: number | undefined;
  /** The newest message this reply posted: a lost later part can only be after it. */
  private lastTs: string | undefined;

  constructor(
    private readonly dest: SlackDestination,
    private readonly deps: SinkDeps,
  ) {
    const team = teamOf(dest.place);
    this.channel = dest.place.channelId;
    this.threadTs = dest.place.threadId;
    this.bucket = {
      post: postBucket(deps.limits, team, this.channel),
      update: updateBucket(deps.limits, team),
      channelUpdate: channelUpdateBucket(deps.limits, team, this.channel),
      history: historyBucket(deps.limits, team),
    };
    this.ladder = createFormLadder(deps.logger);
  }

  /** After a lost post the next one may read the thread and update instead: it pays for both. */
  buckets(op: 'post' | 'edit'): BucketRef[] {
    const b = this.bucket;
    if (op === 'edit') return [b.update, b.channelUpdate];
    return this.uncertainPart !== undefined ? [b.post, b.history, b.update] : [b.post];
  }

  async post(markdown: string, opts: WriteOptions): Promise<PostResult> {
    const text = this.carry(markdown, opts.part);
    if (this.uncertainPart === opts.part) {
      const found = await this.updateLost(text, opts);
      if (found !== undefined) return found;
    }
    return this.postNew(text, opts);
  }

  async edit(ts: string, markdown: string, opts: WriteOptions): Promise<WriteResult> {
    try {
      return await this.updateIn(ts, this.carry(markdown, opts.part), opts);
    } catch (err) {
      throw translateSlackError(err, this.bucket.update.key);
    }
  }

  /** The part's post whose answer was lost, if it made its message: that message updated to `text`. */
  private async updateLost(text: string, opts: WriteOptions): Promise<PostResult | undefined> {
    let found: string | undefined;
    try {
      found = await findPosted(
        this.dest,
        replyMetadata(this.replyId, opts.part),
        this.lastTs ?? this.dest.userMessageTs,
      );
    } catch (err) {
      throw translateSlackError(err, this.bucket.history.key);
    }
    if (found === undefined) return undefined;
    this.deps.logger.info({ part: opts.part }, 'Slack post whose answer was lost found; continuing in it');
    let written: WriteResult;
    try {
      written = await this.updateIn(found, text, opts);
    } catch (err) {
      throw translateSlackError(err, this.bucket.update.key);
    }
    return { ...this.posted(found), ...written };
  }

  /** Posts the part as a new message, with the metadata that finds it should its answer be lost. */
  private async postNew(text: string, opts: WriteOptions): Promise<PostResult> {
    const { channel, threadTs } = this;
    try {
      const { value: res, form } = await this.ladder.send(writeForms(text, opts, false), (f) =>
        this.dest.client.chat.postMessage({
          channel,
          ...(threadTs ? { thread_ts: threadTs } : {}),
          ...f.args,
          metadata: replyMetadata(this.replyId, opts.part),
          unfurl_links: false,
          unfurl_media: false,
          // The form's args always hold `text`; the SDK's union cannot see which member applies.
        } as unknown as ChatPostMessageArguments),
      );
      const ts = res.ts ?? '';
      const result = this.posted(ts);
      if (form.overflow) await this.postOverflow(ts, form.overflow);
      return { ...result, ...this.ladder.take() };
    } catch (err) {
      const e = translateSlackError(err, this.bucket.post.key);
      if (isUncertain(e)) this.uncertainPart = opts.part;
      throw e;
    }
  }

  /** Writes `text` into message `ts` by chat.update (idempotent), in the richest form Slack takes. */
  private async updateIn(ts: string, text: string, opts: WriteOptions): Promise<WriteResult> {
    const { form } = await this.ladder.send(writeForms(text, opts, true), (f) =>
      this.dest.client.chat.update({ channel: this.channel, ts, ...f.args } as ChatUpdateArguments),
    );
    if (form.overflow) await this.postOverflow(ts, form.overflow);
    return this.ladder.take();
  }

  /** A plain final write's parts beyond the first, posted after message `ts` (once each). */
  private postOverflow(ts: string, parts: string[]): Promise<void> {
    return postOverflow(
      this.dest.client,
      { channel: this.channel, threadTs: this.threadTs },
      ts,
      parts,
      this.overflowPosted,
    );
  }

  /** The part's message is in the thread now: later parts come after it. */
  private posted(ts: string): PostResult {
    this.uncertainPart = undefined;
    this.lastTs = ts;
    if (this.threadTs) this.deps.onPosted?.(this.channel, this.threadTs);
    return { messageId: ts };
  }
}

export const REPLY_EVENT_TYPE = 'assistant_bridge_reply';

/** A reply's own id for its posts' metadata (its parts are told apart by number). */
export function newReplyId(): string {
  return randomBytes(8).toString('hex');
}

/** What every post of an edit-mode reply carries: the reply's id and the part's number. */
export function replyMetadata(replyId: string, part: number) {
  return { event_type: REPLY_EVENT_TYPE, event_payload: { reply: replyId, part } };
}

/**
 * A reply split inside a table: the next message starts with table rows and no header. Given
 * each write's text and part, gives the text with the header (and alignment row) of the table
 * the previous part ended in put back before those rows, so that it is a table again.
 */
export function createTableCarry(): (markdown: string, part: number) => string {
  const endsIn = new Map<number, string>();
  return (markdown, part) => {
    const head = endsIn.get(part - 1);
    const first = /^[ \t]*\S[^\n]*/m.exec(markdown)?.[0] ?? '';
    const rows = head !== undefined && splitRow(first) !== undefined && delimiterRow(first) === undefined;
    const md = rows ? head + markdown.replace(/^\s*\n/, '') : markdown;
    const spans = findTables(md);
    const last = spans[spans.length - 1];
    if (last !== undefined && md.slice(last.end).trim() === '') {
      const lines = md.slice(last.start, last.end).split('\n');
      endsIn.set(part, `${lines[0] ?? ''}\n${lines[1] ?? ''}\n`);
    } else endsIn.delete(part);
    return md;
  };
}
