import { type ButtonInteraction, MessageFlags } from 'discord.js';
import type { MessageHandler, Vote } from '../../core/ports.js';
import { MESSAGES } from '../../core/user-messages.js';
import type { Logger } from '../../logger.js';
import { toPlatformError } from './errors.js';
import { CONTROL_PREFIX, STOP_PREFIX as STOP, VOTE_PREFIX as VOTE } from './reply-sink.js';

// Clicks on a reply's buttons (Stop, thumbs: made by reply-sink.ts's replyComponents).

export const isControl = (customId: string) => customId.startsWith(CONTROL_PREFIX);

/** A click on Stop or a thumb: refusals and thanks are ephemeral, nothing is posted in the channel. */
export async function handleControl(i: ButtonInteraction, handler: MessageHandler, logger: Logger): Promise<void> {
  const ephemeral = (content: string) =>
    i.reply({ content, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
  try {
    if (i.customId.startsWith(STOP)) {
      const result = (await handler.stop?.(i.customId.slice(STOP.length), i.user.id)) ?? 'not_found';
      logger.info({ result }, 'discord: stop clicked');
      // A Stop on a reply that already ended does nothing: acknowledged without a word.
      if (result === 'not_owner') await ephemeral(MESSAGES.stopNotOwner);
      else await i.deferUpdate();
      return;
    }
    const m = /^(up|down):(.+)$/.exec(i.customId.slice(VOTE.length));
    if (!i.customId.startsWith(VOTE) || !m?.[1] || !m[2] || handler.vote === undefined) {
      await i.deferUpdate();
      return;
    }
    const result = await handler.vote(m[2], i.user.id, m[1] as Vote);
    await ephemeral(result === 'recorded' ? MESSAGES.feedbackThanks : MESSAGES.feedbackUnknown);
  } catch (err) {
    logger.warn({ err: toPlatformError(err, 'interaction').message }, 'discord: could not answer a control');
  }
}
