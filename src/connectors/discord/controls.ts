import { type ButtonInteraction, MessageFlags } from 'discord.js';
import type { MessageHandler, Vote, WriteOptions } from '../../core/ports.js';
import { MESSAGES } from '../../core/user-messages.js';
import type { Logger } from '../../logger.js';
import { toPlatformError } from './errors.js';

// A reply's buttons, as Slack's controls.ts has them: Stop while it streams, thumbs up/down on
// its last message once it finished; what each write shows (replyComponents, sent by the sinks)
// and what a click does (handleControl). Custom ids carry the reply key (at most 100 characters in all).

export const CONTROL_PREFIX = 'bridge:';
export const STOP_PREFIX = `${CONTROL_PREFIX}stop:`;
export const VOTE_PREFIX = `${CONTROL_PREFIX}vote:`;

/** Discord component types and button styles (discord-api-types). */
const ACTION_ROW = 1;
const BUTTON = 2;
const STYLE_SECONDARY = 2;
const STYLE_DANGER = 4;

export const stopCustomId = (replyKey: string) => `${STOP_PREFIX}${replyKey}`;
export const voteCustomId = (vote: Vote, replyKey: string) => `${VOTE_PREFIX}${vote}:${replyKey}`;

/**
 * The `components` of one write of a reply, or undefined for a write with no controls at all. A
 * final write sends `[]` (or the feedback row): an edit without `components` keeps the old ones.
 */
export function replyComponents(opts: WriteOptions): unknown[] | undefined {
  const key = opts.replyKey;
  if (key === undefined) return undefined;
  if (!opts.final) {
    return [
      {
        type: ACTION_ROW,
        components: [{ type: BUTTON, style: STYLE_DANGER, label: 'Stop', custom_id: stopCustomId(key) }],
      },
    ];
  }
  if (opts.last === true && opts.feedback === true) {
    return [
      {
        type: ACTION_ROW,
        components: [
          { type: BUTTON, style: STYLE_SECONDARY, emoji: { name: '👍' }, custom_id: voteCustomId('up', key) },
          { type: BUTTON, style: STYLE_SECONDARY, emoji: { name: '👎' }, custom_id: voteCustomId('down', key) },
        ],
      },
    ];
  }
  return [];
}

export const isControl = (customId: string) => customId.startsWith(CONTROL_PREFIX);

/** A click on Stop or a thumb: refusals and thanks are ephemeral, nothing is posted in the channel. */
export async function handleControl(i: ButtonInteraction, handler: MessageHandler, logger: Logger): Promise<void> {
  const ephemeral = (content: string) =>
    i.reply({ content, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
  try {
    if (i.customId.startsWith(STOP_PREFIX)) {
      const result = (await handler.stop?.(i.customId.slice(STOP_PREFIX.length), i.user.id)) ?? 'not_found';
      logger.info({ result }, 'discord: stop clicked');
      // A Stop on a reply that already ended does nothing: acknowledged without a word.
      if (result === 'not_owner') await ephemeral(MESSAGES.stopNotOwner);
      else await i.deferUpdate();
      return;
    }
    const m = /^(up|down):(.+)$/.exec(i.customId.slice(VOTE_PREFIX.length));
    if (!i.customId.startsWith(VOTE_PREFIX) || !m?.[1] || !m[2] || handler.vote === undefined) {
      await i.deferUpdate();
      return;
    }
    const result = await handler.vote(m[2], i.user.id, m[1] as Vote);
    await ephemeral(result === 'recorded' ? MESSAGES.feedbackThanks : MESSAGES.feedbackUnknown);
  } catch (err) {
    logger.warn({ err: toPlatformError(err, 'interaction').message }, 'discord: could not answer a control');
  }
}
