import type { webApi } from '@slack/bolt';
import stringWidth from 'string-width';
import { plainParts } from '../plain-parts.js';
import { slackErrorCode } from './rate-limits.js';
import { renderMrkdwn } from './render.js';

// The plain fallback: a write Slack refuses for its rich form is sent again with the same words
// plainly (the sinks' form ladder, form-ladder.ts): a reply is never lost to a refused
// format (Discord's plain-fallback.ts does the same for Discord). The last, plainest form is
// `text` alone, cut into parts where too long; a final write's parts beyond the first are posted
// after it. The refusals (docs.slack.dev chat.postMessage, chat.update, chat.startStream /
// appendStream / stopStream error lists; the table block's `only_one_table_allowed`): every one
// of them is about what the write carried, never about the channel or the token, so the same words
// sent plainly can pass.

export const FORM_REFUSALS: ReadonlySet<string> = new Set([
  'invalid_blocks',
  'invalid_blocks_format',
  'invalid_attachments',
  'too_many_attachments',
  'only_one_table_allowed',
  'msg_blocks_too_long',
  'msg_too_long',
  'markdown_text_too_long',
  'markdown_text_conflict',
  'block_mismatch',
  'invalid_arguments',
]);

/** The Slack error code when `err` refuses a write for its form, else undefined. */
export function formRefusalCode(err: unknown): string | undefined {
  const code = slackErrorCode(err);
  return code !== undefined && FORM_REFUSALS.has(code) ? code : undefined;
}

/** The plain form's parts: under Slack's 4,000 characters of `text` once rendered (entities, links). */
export const PLAIN_PART_CHARS = 3500;
/** Monospace tables in plain text: about what a desktop code block shows without wrapping. */
const PLAIN_TABLES = { widthOf: stringWidth, maxLineWidth: 120 };

/** The reply's words as plain mrkdwn `text` parts: tables as monospace blocks, cut where too long. */
export function plainTexts(markdown: string): string[] {
  return plainParts(markdown, PLAIN_PART_CHARS, PLAIN_TABLES).map((p) => renderMrkdwn(p));
}

/**
 * Posts a plain final write's overflow parts after `anchor`, in the thread. A part already posted
 * for this anchor (the scheduler retried the write after a 429 on a later part) is updated, not
 * posted again: the reply's words appear once.
 */
export async function postOverflow(
  client: webApi.WebClient,
  where: { channel: string; threadTs?: string | undefined },
  anchor: string,
  parts: readonly string[],
  posted: Map<string, string[]>,
): Promise<void> {
  const done = posted.get(anchor) ?? [];
  posted.set(anchor, done);
  for (const [i, text] of parts.entries()) {
    const ts = done[i];
    if (ts !== undefined) {
      await client.chat.update({ channel: where.channel, ts, text, blocks: [] });
      continue;
    }
    const res = await client.chat.postMessage({
      channel: where.channel,
      ...(where.threadTs !== undefined ? { thread_ts: where.threadTs } : {}),
      text,
      unfurl_links: false,
      unfurl_media: false,
    });
    done.push(res.ts ?? '');
  }
}
