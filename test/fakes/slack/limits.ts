// Slack's documented limits on what a message write may carry (docs.slack.dev, chat.postMessage
// and Block Kit): the fake refuses a write over them with the error Slack gives, so a bridge that
// sends too much fails its tests instead of a user's message.

/** chat.postMessage / chat.update `text`: Slack takes no more than 40,000 characters. */
export const TEXT_MAX = 40_000;
/** A section block's `text` holds at most 3,000 characters. */
export const SECTION_TEXT_MAX = 3000;
/** A message holds at most 50 blocks. */
export const BLOCKS_MAX = 50;

/** The error Slack answers a message's `text` with, or undefined when it is within the limit. */
export function textError(text: string): 'msg_too_long' | undefined {
  return text.length > TEXT_MAX ? 'msg_too_long' : undefined;
}

/** The error Slack answers a message's `blocks` with, or undefined when they are within the limits. */
export function blocksError(blocks: unknown[]): 'invalid_blocks' | undefined {
  if (blocks.length > BLOCKS_MAX) return 'invalid_blocks';
  for (const b of blocks) {
    if (typeof b !== 'object' || b === null) return 'invalid_blocks';
    const block = b as { type?: unknown; text?: { text?: unknown } };
    if (block.type !== 'section') continue;
    const text = block.text?.text;
    if (typeof text === 'string' && text.length > SECTION_TEXT_MAX) return 'invalid_blocks';
  }
  return undefined;
}
