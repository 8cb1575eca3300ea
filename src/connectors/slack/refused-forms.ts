import type { webApi } from '@slack/bolt';
import stringWidth from 'string-width';
import type { Logger } from '../../logger.js';
import { FORM_REFUSED, PlatformWriteError } from '../../core/ports.js';
import { plainParts } from '../plain-parts.js';
import { slackErrorCode } from './rate-limits.js';
import { renderMrkdwn } from './render.js';

// A write Slack refuses for its form is sent again at once with the same words in a plainer one:
// a reply is never lost to a refused format. Each sink lists a write's forms richest first
// (a table block in an attachment; section blocks with the controls; plain `text`); the ladder
// tries them in turn, and a form Slack refused is not tried again by the same reply, so a reply's
// later writes (and a write the scheduler retries after a 429) go straight to what Slack took.
//
// The refusals (docs.slack.dev chat.postMessage, chat.update, chat.startStream / appendStream /
// stopStream error lists; the table block's `only_one_table_allowed`): every one of them is about
// what the write carried, never about the channel or the token, so a plainer write can pass.

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
export function formRefusal(err: unknown): string | undefined {
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
        const reason = formRefusal(err);
        if (reason === undefined || next === undefined) throw err;
        refused.push(reason);
        floor = next.level;
        logger.warn({ reason, level: form.level }, 'Slack refused a write for its form; sending the words plainer');
        // Again at once, but on a new grant: the refused call counted against the rate limit.
        throw new PlatformWriteError(`Slack refused the write's form: ${reason}`, FORM_REFUSED, true);
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
