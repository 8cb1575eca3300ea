import { randomBytes } from 'node:crypto';
import type { webApi } from '@slack/bolt';
import {
  PLAIN_FALLBACK,
  PlatformWriteError,
  type PostResult,
  type ReplySink,
  type ReplyTarget,
  type WriteOptions,
  type WriteResult,
} from '../../core/ports.js';
import { delimiterRow, findTables, splitRow } from '../../core/reply/table-parser.js';
import type { Logger } from '../../logger.js';
import { replyBlocks, textBlocks } from './controls.js';
import { createFileUploads, uploadsBytes } from './file-uploads.js';
import { escapeMrkdwn, imageBlocks, showsImage, stepBlock, stepWords, withAgentBlocks } from './agent-view.js';
import { createWorkingIndicator, type SinkDeps, type SlackDestination, teamOf } from './destination.js';
import { findPosted, formRefusalCode, isUncertain, plainTexts, postOverflow } from './failed-writes.js';
import { channelUpdateBucket, historyBucket, postBucket, translateSlackError, updateBucket } from './rate-limits.js';
import { renderMrkdwn } from './render.js';
import { renderWithTables, tableMessage, tableMessageBlocks } from './table-blocks.js';

// Edit mode: the first text is posted in the thread, later text replaces it with chat.update.
// Messages stay under Slack's 4,000-character guidance; the pump continues in a new message.
// Every post carries metadata naming the reply and the part, so that a post whose answer was
// lost can be found (failed-writes.ts). Each write goes in the richest form Slack takes (the
// form ladder below, which the native sink uses too).

export const EDIT_MAX_CHARS = 3900;

type ChatPostMessageArguments = webApi.ChatPostMessageArguments;
type ChatUpdateArguments = webApi.ChatUpdateArguments;

export function replyTarget(dest: SlackDestination, mode: 'edit' | 'native'): ReplyTarget {
  return { place: dest.place, data: { mode, ...(dest.enterpriseId ? { enterpriseId: dest.enterpriseId } : {}) } };
}

/**
 * A write's forms, richest first (the ladder below): a final write with a table fitting a table
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
  const { channelId: channel, threadId: threadTs } = dest.place;
  const post = postBucket(deps.limits, teamOf(dest.place), channel);
  const update = updateBucket(deps.limits, teamOf(dest.place));
  // Edits count in the channel's share of the workspace's updates too (it learns if Slack limits it).
  const channelUpdate = channelUpdateBucket(deps.limits, teamOf(dest.place), channel);
  const working = createWorkingIndicator(dest, deps);
  const carry = createTableCarry();
  // A form Slack refused is not sent again by this reply; the plain form's extra parts, by message.
  const ladder = createFormLadder(deps.logger);
  const overflowPosted = new Map<string, string[]>();
  const history = historyBucket(deps.limits, teamOf(dest.place));
  const replyId = newReplyId();
  /** The part whose post lost its answer: its next attempt first looks for the message. */
  let uncertainPart: number | undefined;
  /** The newest message this reply posted: a lost later part can only be after it. */
  let lastTs: string | undefined;
  const uploads = createFileUploads(dest.client, { channel, threadTs }, deps.logger);

  function posted(ts: string): PostResult {
    uncertainPart = undefined;
    lastTs = ts;
    if (threadTs) deps.onPosted?.(channel, threadTs);
    return { messageId: ts };
  }

  /** Writes `text` into message `ts` by chat.update (idempotent), in the richest form Slack takes. */
  async function updateIn(ts: string, text: string, opts: WriteOptions): Promise<WriteResult> {
    const { form } = await ladder.send(writeForms(text, opts, true), (f) =>
      dest.client.chat.update({ channel, ts, ...f.args } as ChatUpdateArguments),
    );
    if (form.overflow) await postOverflow(dest.client, { channel, threadTs }, ts, form.overflow, overflowPosted);
    return ladder.take();
  }

  return {
    maxChars: EDIT_MAX_CHARS,
    // A message that carried a Stop button needs its final write, even with the text unchanged.
    needsFinalWrite: true,
    // The running step as a context line under the text (agent-view.ts); images as image blocks.
    showsSteps: true,
    showStep: (step) => working.step(step),
    showsFile: (f) => showsImage(f) || uploadsBytes(f),
    target: replyTarget(dest, 'edit'),
    // After a lost post the next one may read the thread and update instead: it pays for both.
    buckets: (op) =>
      op === 'post' ? (uncertainPart !== undefined ? [post, history, update] : [post]) : [update, channelUpdate],
    showWorking: () => working.show(),
    clearWorking: () => working.clear(),
    async post(markdown, opts): Promise<PostResult> {
      // Files sent as bytes go up first; one Slack refused is named under the text.
      const text = carry(markdown + (await uploads.before(opts)), opts.part);
      if (uncertainPart === opts.part) {
        let found: string | undefined;
        try {
          found = await findPosted(dest, replyMetadata(replyId, opts.part), lastTs ?? dest.userMessageTs);
        } catch (err) {
          throw translateSlackError(err, history.key);
        }
        if (found !== undefined) {
          deps.logger.info({ part: opts.part }, 'Slack post whose answer was lost found; continuing in it');
          let written: WriteResult;
          try {
            written = await updateIn(found, text, opts);
          } catch (err) {
            throw translateSlackError(err, update.key);
          }
          return { ...posted(found), ...written };
        }
      }
      try {
        const { value: res, form } = await ladder.send(writeForms(text, opts, false), (f) =>
          dest.client.chat.postMessage({
            channel,
            ...(threadTs ? { thread_ts: threadTs } : {}),
            ...f.args,
            metadata: replyMetadata(replyId, opts.part),
            unfurl_links: false,
            unfurl_media: false,
            // The form's args always hold `text`; the SDK's union cannot see which member applies.
          } as unknown as ChatPostMessageArguments),
        );
        const ts = res.ts ?? '';
        const result = posted(ts);
        if (form.overflow) await postOverflow(dest.client, { channel, threadTs }, ts, form.overflow, overflowPosted);
        return { ...result, ...ladder.take() };
      } catch (err) {
        const e = translateSlackError(err, post.key);
        if (isUncertain(e)) uncertainPart = opts.part;
        throw e;
      }
    },
    async edit(messageId, markdown, opts): Promise<WriteResult> {
      const text = markdown + (await uploads.before(opts));
      try {
        return await updateIn(messageId, carry(text, opts.part), opts);
      } catch (err) {
        throw translateSlackError(err, update.key);
      }
    },
  };
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

// The form ladder: a write Slack refuses for its form goes again at once with the same words in a
// plainer one (failed-writes.ts lists the refusals). Each sink lists a write's forms richest first
// (a table block in an attachment; section blocks with the controls; plain `text`); the ladder
// tries them in turn, and a form Slack refused is not tried again by the same reply, so a reply's
// later writes (and a write the scheduler retries after a 429) go straight to what Slack took.

/** One form of a write: how rich (0 richest), and how to make it (only when it is tried). */
export interface Form {
  level: number;
  build(): BuiltForm;
}

export interface BuiltForm {
  /** The call's arguments. */
  args: Record<string, unknown>;
  /** Plain form of a final write: the parts beyond the first, posted after it as new messages. */
  overflow?: string[];
}

export interface FormLadder {
  /**
   * Sends the first of `forms` this reply has not outgrown. On a form refusal the reply steps down
   * to the next form and FORM_REFUSED is thrown: the writer sends again at once on a new grant.
   * The last form's refusal, and any other error, is thrown as it came.
   */
  send<T>(forms: readonly Form[], call: (form: BuiltForm) => Promise<T>): Promise<{ value: T; form: BuiltForm }>;
  /** A refusal the sink handled itself (a native stream call that fell back to edits). */
  note(reason: string): void;
  /** The refusals since the last call (for the write's `fallbacks`). */
  take(): { fallbacks?: string[] };
}

export function createFormLadder(logger: Logger): FormLadder {
  /** The least rich form this reply still tries first: raised past each refused form. */
  let floor = 0;
  let refused: string[] = [];
  return {
    async send(forms, call) {
      const usable = forms.filter((f) => f.level >= floor);
      const [form, next] = usable.length > 0 ? usable : forms.slice(-1);
      if (form === undefined) throw new Error('a write needs at least one form');
      const built = form.build();
      try {
        return { value: await call(built), form: built };
      } catch (err) {
        const reason = formRefusalCode(err);
        if (reason === undefined || next === undefined) throw err;
        refused.push(reason);
        floor = next.level;
        logger.warn({ reason, level: form.level }, 'Slack refused a write for its form; sending the words plainer');
        // Again at once, but on a new grant: the refused call counted against the rate limit.
        throw new PlatformWriteError(`Slack refused the write's form: ${reason}`, PLAIN_FALLBACK, true);
      }
    },
    note(reason) {
      refused.push(reason);
    },
    take() {
      if (refused.length === 0) return {};
      const fallbacks = refused;
      refused = [];
      return { fallbacks };
    },
  };
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
