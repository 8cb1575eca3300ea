import type { types } from '@slack/bolt';
import type { PostResult, ReplySink, ReplyTarget, WriteOptions, WriteResult } from '../../core/ports.js';
import { type SinkDeps, type SlackDestination, teamOf } from './destination.js';
import { historyBucket, postBucket, translateSlackError, updateBucket } from './rate-limits.js';
import { findPosted, isUncertain, newReplyId, replyMetadata } from './uncertain-posts.js';
import { replyBlocks } from './controls.js';
import { renderMrkdwn } from './render.js';
import { createTableCarry, renderWithTables, tableMessageBlocks } from './table-blocks.js';
import { createWorkingIndicator } from './working.js';

// Edit mode: the first text is posted in the thread, later text replaces it with chat.update.
// Messages stay under Slack's 4,000-character guidance; the pump continues in a new message.

export const EDIT_MAX_CHARS = 3900;

type KnownBlock = types.KnownBlock;

export function replyTarget(dest: SlackDestination, mode: 'edit' | 'native'): ReplyTarget {
  return { place: dest.place, data: { mode, ...(dest.enterpriseId ? { enterpriseId: dest.enterpriseId } : {}) } };
}

/**
 * A final write's blocks when its text holds a Markdown table: the table as a Block Kit table.
 * While the reply streams its tables show as text; `text` keeps them too (notifications, search).
 */
function finalContent(markdown: string, opts: WriteOptions): KnownBlock[] | undefined {
  return opts.final ? tableMessageBlocks(markdown, renderMrkdwn) : undefined;
}

export function createEditSink(dest: SlackDestination, deps: SinkDeps): ReplySink {
  const { channelId: channel, threadId: threadTs } = dest.place;
  const post = postBucket(deps.limits, teamOf(dest.place), channel);
  const update = updateBucket(deps.limits, teamOf(dest.place));
  const working = createWorkingIndicator(dest, deps);
  const carry = createTableCarry();
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

  /** A message found after a lost post: written to its whole content by an update (idempotent). */
  async function continueIn(ts: string, content: { text: string; blocks?: KnownBlock[] }): Promise<void> {
    try {
      await dest.client.chat.update({ channel, ts, ...content });
    } catch (err) {
      throw translateSlackError(err, update.key);
    }
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
      const rendered = renderWithTables(text, renderMrkdwn);
      const blocks = replyBlocks(rendered, opts, finalContent(text, opts));
      const content = { text: rendered, ...(blocks !== undefined ? { blocks } : {}) };
      if (uncertainPart === opts.part) {
        let found: string | undefined;
        try {
          found = await findPosted(dest, replyId, opts.part, lastTs ?? dest.userMessageTs);
        } catch (err) {
          throw translateSlackError(err, history.key);
        }
        if (found !== undefined) {
          deps.logger.info({ part: opts.part }, 'Slack post whose answer was lost found; continuing in it');
          await continueIn(found, content);
          return posted(found);
        }
      }
      try {
        const res = await dest.client.chat.postMessage({
          channel,
          ...(threadTs ? { thread_ts: threadTs } : {}),
          ...content,
          metadata: replyMetadata(replyId, opts.part),
          unfurl_links: false,
          unfurl_media: false,
        });
        return posted(res.ts ?? '');
      } catch (err) {
        const e = translateSlackError(err, post.key);
        if (isUncertain(e)) uncertainPart = opts.part;
        throw e;
      }
    },
    async edit(messageId, markdown, opts): Promise<WriteResult> {
      try {
        const text = carry(markdown, opts.part);
        const rendered = renderWithTables(text, renderMrkdwn);
        const blocks = replyBlocks(rendered, opts, finalContent(text, opts));
        await dest.client.chat.update({
          channel,
          ts: messageId,
          text: rendered,
          ...(blocks !== undefined ? { blocks } : {}),
        });
        return {};
      } catch (err) {
        throw translateSlackError(err, update.key);
      }
    },
  };
}
