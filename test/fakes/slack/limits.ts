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
  let tables = 0;
  for (const b of blocks) {
    if (typeof b !== 'object' || b === null) return 'invalid_blocks';
    const block = b as { type?: unknown; text?: { text?: unknown } };
    if (block.type === 'table') {
      if (++tables > TABLES_MAX || !tableValid(b)) return 'invalid_blocks';
      continue;
    }
    if (block.type !== 'section') continue;
    const text = block.text?.text;
    if (typeof text === 'string' && text.length > SECTION_TEXT_MAX) return 'invalid_blocks';
  }
  return undefined;
}

/** The error Slack answers a message's `attachments` with: each an object, its `blocks` as a message's. */
export function attachmentsError(list: unknown): 'invalid_attachments' | undefined {
  if (!Array.isArray(list)) return 'invalid_attachments';
  for (const x of list as unknown[]) {
    if (typeof x !== 'object' || x === null) return 'invalid_attachments';
    const blocks = (x as { blocks?: unknown }).blocks;
    if (blocks !== undefined && (!Array.isArray(blocks) || blocksError(blocks) !== undefined)) {
      return 'invalid_attachments';
    }
  }
  return undefined;
}

/** Table block (docs.slack.dev reference/block-kit/blocks/table-block): one per message. */
export const TABLES_MAX = 1;
/** At most 100 rows of at most 20 cells; at most 20 column_settings. */
export const TABLE_ROWS_MAX = 100;
export const TABLE_CELLS_MAX = 20;
const ALIGNS = new Set(['left', 'center', 'right']);

/** A cell Slack takes: `raw_text` with a non-empty text, or `rich_text` with elements. */
function cellValid(c: unknown): boolean {
  if (typeof c !== 'object' || c === null) return false;
  const cell = c as { type?: unknown; text?: unknown; elements?: unknown };
  if (cell.type === 'raw_text') return typeof cell.text === 'string' && cell.text.length > 0;
  if (cell.type === 'rich_text') return Array.isArray(cell.elements) && cell.elements.length > 0;
  return false;
}

function tableValid(b: object): boolean {
  const t = b as { rows?: unknown; column_settings?: unknown };
  if (!Array.isArray(t.rows) || t.rows.length === 0 || t.rows.length > TABLE_ROWS_MAX) return false;
  for (const row of t.rows as unknown[]) {
    if (!Array.isArray(row) || row.length === 0 || row.length > TABLE_CELLS_MAX) return false;
    if (!row.every(cellValid)) return false;
  }
  if (t.column_settings === undefined) return true;
  if (!Array.isArray(t.column_settings) || t.column_settings.length > TABLE_CELLS_MAX) return false;
  return (t.column_settings as unknown[]).every((s) => {
    if (s === null || typeof s !== 'object') return s === null;
    const a = (s as { align?: unknown }).align;
    return a === undefined || (typeof a === 'string' && ALIGNS.has(a));
  });
}
