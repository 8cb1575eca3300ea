import type { types } from '@slack/bolt';
import stringWidth from 'string-width';
import { findTables, type Table, type TableSpan } from '../../core/reply/table-parser.js';
import { INLINE_MAX_CELL, monospaceTable, plainCell } from '../../core/reply/tables.js';
import { textBlocks } from './controls.js';
import { neutraliseMrkdwn } from './render.js';

type KnownBlock = types.KnownBlock;
type TableBlock = types.TableBlock;
type Cell = TableBlock['rows'][number][number];
type RichElement = types.RichTextElement;

// A reply's final write on Slack with its first Markdown table as a Block Kit `table` block, the
// text before and after in section blocks, in order. Slack's rules for the block (docs.slack.dev,
// reference/block-kit/blocks/table-block; @slack/types TableBlock): at most 100 rows of at most 20
// cells, at most 20 column_settings, one table per message, and (slackapi/slack-skills-plugin,
// data-display-design.md) at most 10,000 characters of cell text in a table.
//
// Where the block goes: a message's `attachments`, in an attachment's `blocks`, not the message's
// own `blocks`. The reference's field table does not say it (its "Usage info" is where Slack
// places it); what Slack answers does: a second table is refused as `invalid_attachments` with
// `only_one_table_allowed`, and apps that sent the block in `blocks` report `invalid_blocks`
// (netclaw-dev/netclaw#55 quoting the reference: "Tables go in `attachments`, not `blocks`";
// openclaw/openclaw#57717 sends it so). Attachments show after a message's blocks, so the words
// before the table are the message's blocks and the table with everything after it (the rest of
// the words, the feedback buttons) is the attachment's: the reading order stays the words'.
// Should Slack refuse the form anyway, the write goes again without it (the form ladder, form-ladder.ts): the
// same sections with every table as a monospace block, then plain text.
//
// Any other table (a second one, or one beyond the limits) is an aligned monospace block, so
// nothing is lost. The message's `text` (notifications, search) keeps the Markdown rendering,
// pipes included, so it carries every cell. Slack's data table block (2026) takes no more rows
// (docs.slack.dev data-table-block: at most 101 rows, the header included) and counts as this
// message's one table, so a longer table is monospace text too, cut at row ends.
//
// Native streams (reply-sink-native.ts) send their table as a `blocks` chunk in the stream, in
// place between the words (stream-tables.ts): chat.stopStream's own `blocks` are appended after
// the streamed text (Slack: "Block formatted elements will be appended to the end of the
// message"), and `markdown_text` shows a table's pipes.

export const TABLE_MAX_ROWS = 100;
export const TABLE_MAX_CELLS = 20;
/** Cell text a table block holds in all (slack-skills-plugin: "10,000 characters for `table`"). */
export const TABLE_MAX_TEXT = 10_000;
/** Section blocks a message may carry besides its controls (Slack: 50 blocks in all). */
const BLOCKS_BUDGET = 48;
/** A monospace section stays under a section's 3,000 characters with its fence. */
const CODE_SECTION_MAX = 2900;

/** A cell's inline Markdown as rich text elements (code, bold, italic, strike, web links). */
const INLINE =
  /`([^`]+)`|\*\*(?=\S)(.+?)\*\*|__(?=\S)(.+?)__|~~(?=\S)(.+?)~~|\[([^\]]+)\]\(((?:https?:\/\/|mailto:)[^)\s]+)\)|(?<![\w*])\*(?=\S)([^*]+?)\*(?!\w)|(?<!\w)_(?=\S)([^_]+?)_(?!\w)/g;

export function cellElements(cell: string): RichElement[] | undefined {
  if (cell.length > INLINE_MAX_CELL) return undefined;
  const out: RichElement[] = [];
  let last = 0;
  let styled = false;
  for (const m of cell.matchAll(INLINE)) {
    const at = m.index;
    if (at > last) out.push({ type: 'text', text: cell.slice(last, at) });
    styled = true;
    if (m[1] !== undefined) out.push({ type: 'text', text: m[1], style: { code: true } });
    else if (m[2] !== undefined || m[3] !== undefined)
      out.push({ type: 'text', text: m[2] ?? m[3] ?? '', style: { bold: true } });
    else if (m[4] !== undefined) out.push({ type: 'text', text: m[4], style: { strike: true } });
    else if (m[5] !== undefined && m[6] !== undefined) out.push({ type: 'link', url: m[6], text: m[5] });
    else out.push({ type: 'text', text: m[7] ?? m[8] ?? '', style: { italic: true } });
    last = at + m[0].length;
  }
  if (!styled) return undefined;
  if (last < cell.length) out.push({ type: 'text', text: cell.slice(last) });
  return out;
}

function cellOf(text: string): Cell {
  const elements = cellElements(text);
  if (elements === undefined) return { type: 'raw_text', text: text === '' ? ' ' : text };
  return { type: 'rich_text', elements: [{ type: 'rich_text_section', elements: elements }] };
}

export function fitsTableBlock(t: Table): boolean {
  if (t.rows.length + 1 > TABLE_MAX_ROWS || t.header.length > TABLE_MAX_CELLS) return false;
  let chars = 0;
  for (const r of [t.header, ...t.rows]) for (const c of r) chars += c.length;
  return chars <= TABLE_MAX_TEXT;
}

export function tableBlock(t: Table): TableBlock {
  const block: TableBlock = { type: 'table', rows: [t.header, ...t.rows].map((r) => r.map(cellOf)) };
  if (t.align.some((a) => a !== undefined)) block.column_settings = t.align.map((a) => (a ? { align: a } : {}));
  return block;
}

/** An aligned monospace rendering in section blocks, each its own fence, cut at row ends. */
function codeSections(t: Table): KnownBlock[] {
  const code = monospaceTable(t, { widthOf: stringWidth, maxLineWidth: 160 }).replace(/```/g, '');
  const sections: KnownBlock[] = [];
  let cur = '';
  const push = () => {
    if (cur.trim() !== '')
      sections.push({ type: 'section', text: { type: 'mrkdwn', text: '```\n' + cur.trim() + '\n```' } });
    cur = '';
  };
  for (const line of code.split('\n')) {
    if (cur.length + line.length + 1 > CODE_SECTION_MAX) push();
    cur += line.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;') + '\n';
  }
  push();
  return sections;
}

/** A final write with a table block: the words before it, and the attachment from the table on. */
export interface TableMessage {
  blocks: KnownBlock[];
  /** One attachment; its blocks start with the table (the caller adds the controls at its end). */
  attachment: KnownBlock[];
}

/**
 * The rich form of a final write of `markdown`: its first table that fits a table block, as one,
 * in the attachment. Undefined when no table fits, or the message would hold too many blocks.
 */
export function tableMessage(markdown: string, render: (md: string) => string): TableMessage | undefined {
  const spans = findTables(markdown);
  const first = spans.find((s) => fitsTableBlock(s.table));
  if (first === undefined) return undefined;
  const blocks: KnownBlock[] = [];
  const attachment: KnownBlock[] = [];
  let at = 0;
  for (const s of spans) {
    // Up to the table block, the message's blocks; from it on, the attachment's.
    const into = s.start <= first.start ? blocks : attachment;
    const md = markdown.slice(at, s.start);
    if (md.trim() !== '') into.push(...textBlocks(render(md)));
    if (s === first) attachment.push(tableBlock(s.table));
    else into.push(...codeSections(s.table));
    at = s.end;
  }
  const rest = markdown.slice(at);
  if (rest.trim() !== '') attachment.push(...textBlocks(render(rest)));
  return blocks.length + attachment.length <= BLOCKS_BUDGET ? { blocks, attachment } : undefined;
}

/**
 * The blocks of a final write of `markdown` when it holds a table and no table block is sent
 * (none fits, or Slack refused the rich form): the text in sections, every table an aligned
 * monospace block. Undefined when there is no table, or more blocks than a message takes (the
 * caller then sends the text as it would without tables).
 */
export function tableMessageBlocks(markdown: string, render: (md: string) => string): KnownBlock[] | undefined {
  const spans = findTables(markdown);
  if (spans.length === 0) return undefined;
  const blocks: KnownBlock[] = [];
  let at = 0;
  for (const s of spans) {
    const md = markdown.slice(at, s.start);
    if (md.trim() !== '') blocks.push(...textBlocks(render(md)));
    blocks.push(...codeSections(s.table));
    at = s.end;
  }
  const rest = markdown.slice(at);
  if (rest.trim() !== '') blocks.push(...textBlocks(render(rest)));
  return blocks.length <= BLOCKS_BUDGET ? blocks : undefined;
}

/**
 * The message's `text` (mrkdwn) with its tables as compact lines of cells (`a | b`): the
 * Markdown library pads a table's columns, which can take a message past Slack's 4,000
 * characters. Used for every write of a reply (a streaming one shows its tables so) and as the
 * notification text of a message whose blocks hold the table.
 */
export function renderWithTables(markdown: string, render: (md: string) => string): string {
  const spans = findTables(markdown);
  if (spans.length === 0) return render(markdown);
  return joinAround(markdown, spans, render, (t) =>
    neutraliseMrkdwn([t.header, ...t.rows].map((r) => r.map(plainCell).join(' | ')).join('\n')),
  );
}

function joinAround(
  markdown: string,
  spans: TableSpan[],
  render: (md: string) => string,
  table: (t: Table) => string,
): string {
  const out: string[] = [];
  let at = 0;
  for (const s of spans) {
    const md = markdown.slice(at, s.start);
    if (md.trim() !== '') out.push(render(md));
    out.push(table(s.table));
    at = s.end;
  }
  const rest = markdown.slice(at);
  if (rest.trim() !== '') out.push(render(rest));
  return out.join('\n\n');
}
