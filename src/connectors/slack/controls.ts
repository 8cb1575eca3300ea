import type { App, types } from '@slack/bolt';

type KnownBlock = types.KnownBlock;
import type { MessageHandler, Vote, WriteOptions } from '../../core/ports.js';
import { MESSAGES } from '../../core/user-messages.js';
import { type Logger, scrubSecrets } from '../../logger.js';

// A reply's controls in Slack: a Stop button while it streams (edit mode), thumbs up/down once it
// finished. The text is sent as section blocks with the controls after them (`text` stays the
// notification fallback); the final write sends blocks without Stop, so the button goes away.

export const STOP_ACTION = 'bridge_stop';
export const FEEDBACK_ACTION = 'bridge_feedback';
/** A section's text may hold at most 3000 characters. */
const SECTION_MAX = 3000;

/** Rendered mrkdwn cut into section-sized pieces, at a line end when there is one. */
export function sectionTexts(mrkdwn: string): string[] {
  const out: string[] = [];
  let rest = mrkdwn;
  while (rest.length > SECTION_MAX) {
    let cut = rest.lastIndexOf('\n', SECTION_MAX);
    if (cut < SECTION_MAX / 2) cut = rest.lastIndexOf(' ', SECTION_MAX);
    if (cut < SECTION_MAX / 2) cut = SECTION_MAX;
    const head = rest.slice(0, cut);
    if (/\S/.test(head)) out.push(head);
    rest = rest.slice(cut).replace(/^\n/, '');
  }
  if (/\S/.test(rest) || out.length === 0) out.push(rest);
  return out;
}

/** The text as section blocks, no controls (what a message shows once its reply is over). */
export function textBlocks(mrkdwn: string): KnownBlock[] {
  return sectionTexts(mrkdwn).map((text) => ({ type: 'section', text: { type: 'mrkdwn', text } }));
}

/** The feedback element: Slack's thumbs up/down, values carrying the vote and the reply. */
export function feedbackBlock(replyKey: string): KnownBlock {
  return {
    type: 'context_actions',
    elements: [
      {
        type: 'feedback_buttons',
        action_id: FEEDBACK_ACTION,
        positive_button: {
          text: { type: 'plain_text', text: '👍' },
          accessibility_label: 'Good reply',
          value: `up:${replyKey}`,
        },
        negative_button: {
          text: { type: 'plain_text', text: '👎' },
          accessibility_label: 'Bad reply',
          value: `down:${replyKey}`,
        },
      },
    ],
  };
}

/**
 * The blocks of one write of a reply, or undefined for a write with no controls at all (a notice,
 * a sink used without a reply key). A final write still sends its blocks: chat.update keeps the
 * previous blocks (and their Stop button) when none are given.
 */
export function replyBlocks(mrkdwn: string, opts: WriteOptions, content?: KnownBlock[]): KnownBlock[] | undefined {
  const key = opts.replyKey;
  // `content`: the text's own blocks when sections are not enough (a table, table-blocks.ts).
  if (key === undefined) return content;
  const blocks = content ?? textBlocks(mrkdwn);
  if (!opts.final) {
    blocks.push({
      type: 'actions',
      elements: [
        {
          type: 'button',
          action_id: STOP_ACTION,
          text: { type: 'plain_text', text: 'Stop' },
          style: 'danger',
          value: key,
        },
      ],
    });
  } else if (opts.last === true && opts.feedback === true) {
    blocks.push(feedbackBlock(key));
  }
  return blocks;
}

/** Reads `up:KEY` / `down:KEY`. */
export function parseVote(value: string | undefined): { vote: Vote; replyKey: string } | undefined {
  const m = /^(up|down):(.+)$/.exec(value ?? '');
  if (!m?.[1] || !m[2]) return undefined;
  return { vote: m[1] as Vote, replyKey: m[2] };
}

/** Where a click came from, as block_actions bodies carry it. */
interface ClickBody {
  user?: { id?: string };
  channel?: { id?: string };
  container?: { channel_id?: string; thread_ts?: string };
  message?: { ts?: string; thread_ts?: string };
  actions?: { value?: string; action_id?: string }[];
}

/** Stop and feedback clicks: acked at once, answered (when at all) with an ephemeral message. */
export function registerControlActions(app: App, handler: () => MessageHandler | undefined, logger: Logger): void {
  const where = (body: ClickBody) => {
    const channel = body.channel?.id ?? body.container?.channel_id;
    const threadTs = body.message?.thread_ts ?? body.container?.thread_ts;
    return { channel, threadTs, user: body.user?.id };
  };
  const tell = async (client: App['client'], body: ClickBody, text: string) => {
    const w = where(body);
    if (w.channel === undefined || w.user === undefined) return;
    try {
      await client.chat.postEphemeral({
        channel: w.channel,
        user: w.user,
        text,
        ...(w.threadTs !== undefined ? { thread_ts: w.threadTs } : {}),
      });
    } catch (err) {
      logger.warn({ err: scrubSecrets(String(err)) }, 'Slack: could not post an ephemeral answer');
    }
  };

  app.action(STOP_ACTION, async ({ ack, body, client }) => {
    await ack();
    const b = body as ClickBody;
    const key = b.actions?.[0]?.value;
    const user = b.user?.id;
    const h = handler();
    if (key === undefined || user === undefined || h?.stop === undefined) return;
    const result = await h.stop(key, user);
    logger.info({ result }, 'Slack: stop clicked');
    // A Stop on a reply that already ended does nothing, and says nothing.
    if (result === 'not_owner') await tell(client, b, MESSAGES.stopNotOwner);
  });

  app.action(FEEDBACK_ACTION, async ({ ack, body, client }) => {
    await ack();
    const b = body as ClickBody;
    const parsed = parseVote(b.actions?.[0]?.value);
    const user = b.user?.id;
    const h = handler();
    if (parsed === undefined || user === undefined || h?.vote === undefined) return;
    try {
      const result = await h.vote(parsed.replyKey, user, parsed.vote);
      await tell(client, b, result === 'recorded' ? MESSAGES.feedbackThanks : MESSAGES.feedbackUnknown);
    } catch (err) {
      logger.error({ err: scrubSecrets(String(err)) }, 'Slack: recording a vote failed');
    }
  });
}
