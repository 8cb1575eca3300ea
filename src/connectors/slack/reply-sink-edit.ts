import type { types } from '@slack/bolt';
import type { PostResult, ReplySink, ReplyTarget, WriteOptions, WriteResult } from '../../core/ports.js';
import { type SinkDeps, type SlackDestination, teamOf } from './destination.js';
import { postBucket, translateSlackError, updateBucket } from './rate-limits.js';
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
  return {
    maxChars: EDIT_MAX_CHARS,
    // A message that carried a Stop button needs its final write, even with the text unchanged.
    needsFinalWrite: true,
    target: replyTarget(dest, 'edit'),
    buckets: (op) => [op === 'post' ? post : update],
    showWorking: () => working.show(),
    clearWorking: () => working.clear(),
    async post(markdown, opts): Promise<PostResult> {
      try {
        const text = carry(markdown, opts.part);
        const rendered = renderWithTables(text, renderMrkdwn);
        const blocks = replyBlocks(rendered, opts, finalContent(text, opts));
        const res = await dest.client.chat.postMessage({
          channel,
          ...(threadTs ? { thread_ts: threadTs } : {}),
          text: rendered,
          ...(blocks !== undefined ? { blocks } : {}),
          unfurl_links: false,
          unfurl_media: false,
        });
        if (threadTs) deps.onPosted?.(channel, threadTs);
        return { messageId: res.ts ?? '' };
      } catch (err) {
        throw translateSlackError(err, post.key);
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
