import type { types } from '@slack/bolt';
import { findTables, type Table } from '../../core/reply/table-parser.js';
import { renderMarkdownText } from './render.js';
import { fitsTableBlock, tableBlock } from './table-blocks.js';

type KnownBlock = types.KnownBlock;

// A native stream's Markdown tables as Block Kit tables, in place. Slack's stream methods take
// `chunks` in order (markdown_text, task_update, plan_update and `blocks` chunks: Slack's
// reference of chat.appendStream/stopStream; @slack/types BlocksChunk "for passing an array of
// blocks within a streaming message"), so a table is appended as a `blocks` chunk holding a
// `table` block between the words before and after it; `markdown_text` alone shows its pipes.
//
// The stream's shown text keeps the table as a marker (a private-use character pair around its
// index), so the sink's rule "append what is new after what is shown" holds unchanged: what
// follows the marker is sent as chunks, the marker as the table's block. A table is sent once
// whole: while it may still grow (nothing after it yet, the reply not over) it is held back.
// Slack takes one table per message: the message's first table that fits the block is one, any
// other stays Markdown text (nothing is lost).

const OPEN = '\uE000';
const CLOSE = '\uE001';
const MARKER = /\uE000(\d+)\uE001/g;

export type StreamChunk = { type: 'markdown_text'; text: string } | { type: 'blocks'; blocks: KnownBlock[] };

/** What a native message shows of `markdown`: its rendering, its table as a marker, and the table. */
export interface StreamView {
  /** Rendered text with the table block's place marked (compare and slice it as text). */
  shown: string;
  /** The tables the markers name, by index. */
  tables: Table[];
}

/**
 * The view of a native message's `markdown` (already cut where the sink commits it). `final`:
 * the reply's last words for this message, so a table at its end is whole.
 */
export function streamView(full: string, final: boolean): StreamView {
  const markdown = final ? full : withoutTrailingRows(full);
  const span = findTables(markdown).find((s) => fitsTableBlock(s.table));
  if (span === undefined) return { shown: renderMarkdownText(markdown), tables: [] };
  const before = markdown.slice(0, span.start);
  const after = markdown.slice(span.end);
  // Nothing after it yet, and more to come: the table may still gain rows.
  if (!final && after.trim() === '') return { shown: renderMarkdownText(before), tables: [] };
  return {
    shown: `${renderMarkdownText(before)}${OPEN}0${CLOSE}${renderMarkdownText(after)}`,
    tables: [span.table],
  };
}

/**
 * A growing text without its trailing lines that hold a pipe: they may be a table's first rows,
 * recognised only once its delimiter row comes, and a row shown as text could not become the
 * table's block without replacing what the user watched stream.
 */
function withoutTrailingRows(markdown: string): string {
  const lines = markdown.split('\n');
  let i = lines.length - 1;
  // A text ending with a newline: its last line is the one before.
  if (i > 0 && lines[i] === '') i--;
  let cut = -1;
  for (; i >= 0 && (lines[i] ?? '').includes('|'); i--) cut = i;
  if (cut < 0) return markdown;
  return cut === 0 ? '' : `${lines.slice(0, cut).join('\n')}\n`;
}

/** Whether this shown text holds a table's marker. */
export function hasTable(shown: string): boolean {
  return shown.includes(OPEN);
}

/** A piece of shown text (the part after what the message already shows) as stream chunks. */
export function streamChunks(piece: string, tables: readonly Table[]): StreamChunk[] {
  const out: StreamChunk[] = [];
  let at = 0;
  for (const m of piece.matchAll(MARKER)) {
    const text = piece.slice(at, m.index);
    if (text !== '') out.push({ type: 'markdown_text', text });
    const table = tables[Number(m[1])];
    if (table !== undefined) out.push({ type: 'blocks', blocks: [tableBlock(table)] });
    at = m.index + m[0].length;
  }
  const rest = piece.slice(at);
  if (rest !== '') out.push({ type: 'markdown_text', text: rest });
  return out;
}
