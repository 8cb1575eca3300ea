import type { webApi } from '@slack/bolt';
import type { PostResult, ReplySink, ReplyTarget, WriteOptions, WriteResult } from '../../core/ports.js';
import { createWorkingIndicator, type SinkDeps, type SlackDestination, teamOf } from './destination.js';
import { historyBucket, postBucket, translateSlackError, updateBucket } from './rate-limits.js';
import { findPosted, isUncertain, newReplyId, replyMetadata } from './uncertain-posts.js';
import { replyBlocks } from './controls.js';
import { renderMrkdwn } from './render.js';
import { createFormLadder, type Form, plainTexts, postOverflow } from './refused-forms.js';
import { createTableCarry, renderWithTables, tableMessage, tableMessageBlocks } from './table-blocks.js';

// Edit mode: the first text is posted in the thread, later text replaces it with chat.update.
// Messages stay under Slack's 4,000-character guidance; the pump continues in a new message.

export const EDIT_MAX_CHARS = 3900;

type ChatPostMessageArguments = webApi.ChatPostMessageArguments;
type ChatUpdateArguments = webApi.ChatUpdateArguments;

export function replyTarget(dest: SlackDestination, mode: 'edit' | 'native'): ReplyTarget {
  return { place: dest.place, data: { mode, ...(dest.enterpriseId ? { enterpriseId: dest.enterpriseId } : {}) } };
}

/**
 * A write's forms, richest first (refused-forms.ts): a final write with a table fitting a table
 * block has it in an attachment; every write has its text in section blocks with the controls
 * (a final one with its tables as monospace blocks; while the reply streams its tables show as
 * text); the plain form is `text` alone, tables as monospace blocks, cut where too long. `text`
 * keeps the whole rendering in the richer forms (notifications, search). `update`: the plain form
 * clears the blocks and attachments an earlier write left (chat.update keeps them otherwise).
 */
function writeForms(text: string, opts: WriteOptions, update: boolean): Form[] {
  // Each form is made only when it is tried: a write Slack takes costs one rendering.
  let renderedOnce: string | undefined;
  const rendered = () => (renderedOnce ??= renderWithTables(text, renderMrkdwn));
  const rich = opts.final ? tableMessage(text, renderMrkdwn) : undefined;
  const forms: Form[] = [];
  if (rich !== undefined) {
    forms.push({
      level: 0,
      build: () => ({
        args: {
          text: rendered(),
          ...(rich.blocks.length > 0 || update ? { blocks: rich.blocks } : {}),
          attachments: [{ blocks: replyBlocks(rendered(), opts, rich.attachment) ?? rich.attachment }],
        },
      }),
    });
  }
  forms.push({
    level: 1,
    build: () => {
      const blocks = replyBlocks(rendered(), opts, opts.final ? tableMessageBlocks(text, renderMrkdwn) : undefined);
      return {
        args: {
          text: rendered(),
          ...(blocks !== undefined ? { blocks } : {}),
          ...(update && rich !== undefined ? { attachments: [] } : {}),
        },
      };
    },
  });
  forms.push({
    level: 2,
    build: () => {
      const [first = '…', ...rest] = plainTexts(text);
      return {
        args: { text: first, ...(update ? { blocks: [], attachments: [] } : {}) },
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
    target: replyTarget(dest, 'edit'),
    // After a lost post the next one may read the thread and update instead: it pays for both.
    buckets: (op) => (op === 'post' ? (uncertainPart !== undefined ? [post, history, update] : [post]) : [update]),
    showWorking: () => working.show(),
    clearWorking: () => working.clear(),
    async post(markdown, opts): Promise<PostResult> {
      const text = carry(markdown, opts.part);
      if (uncertainPart === opts.part) {
        let found: string | undefined;
        try {
          found = await findPosted(dest, replyId, opts.part, lastTs ?? dest.userMessageTs);
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
      try {
        return await updateIn(messageId, carry(markdown, opts.part), opts);
      } catch (err) {
        throw translateSlackError(err, update.key);
      }
    },
  };
}
