import { findFences } from './split.js';

// Markdown tables (GitHub style, with or without outer pipes) found in a reply, and their
// rendering as aligned monospace lines for platforms without a table (Discord, Slack beyond its
// table block's limits). Platform-neutral: the display-width function is given by the caller.
// Finding is one pass over the lines (each line is split at most twice); fenced code is skipped.

export type Align = 'left' | 'center' | 'right' | undefined;

export interface Table {
  header: string[];
  align: Align[];
  rows: string[][];
}

export interface TableSpan {
  /** Offsets in the text: the header line's start, and the end of the last row (after its newline). */
  start: number;
  end: number;
  table: Table;
}

/** The cells of a row line, or undefined when the line holds no unescaped pipe. */
export function splitRow(line: string): string[] | undefined {
  const s = line.trim();
  if (s.length === 0) return undefined;
  const cells: string[] = [];
  let cur = '';
  let pipes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && s[i + 1] === '|') {
      cur += '|';
      i++;
    } else if (c === '|') {
      pipes++;
      cells.push(cur);
      cur = '';
    } else cur += c;
  }
  cells.push(cur);
  if (pipes === 0) return undefined;
  // Outer pipes are optional: an empty first/last cell next to them is no cell.
  if (line.trimStart().startsWith('|')) cells.shift();
  if (/(^|[^\\])\|\s*$/.test(line) && cells.length > 0) cells.pop();
  return cells.map((c) => c.trim());
}

const DELIM_CELL = /^:?-+:?$/;

/** The alignments of a delimiter row (`|:--|--:|`), or undefined when the line is not one. */
export function delimiterRow(line: string): Align[] | undefined {
  const cells = splitRow(line);
  if (cells === undefined || cells.length === 0) return undefined;
  const out: Align[] = [];
  for (const c of cells) {
    if (!DELIM_CELL.test(c)) return undefined;
    const l = c.startsWith(':');
    const r = c.endsWith(':');
    out.push(l && r ? 'center' : r ? 'right' : l ? 'left' : undefined);
  }
  return out;
}

/** A line that may be a table's header: a pipe, and not indented code. */
const headerCandidate = (line: string): boolean => line.includes('|') && !/^( {4}|\t)/.test(line);

/** Every table of `text`, in order (none inside fenced code). */
export function findTables(text: string): TableSpan[] {
  const fences = findFences(text);
  const spans: TableSpan[] = [];
  let fi = 0;
  let ls = 0;
  let pending: { start: number; end: number; cells: string[] } | undefined;
  let open: TableSpan | undefined;
  while (ls < text.length) {
    const fence = fences[fi];
    if (fence !== undefined && fence.openStart <= ls) {
      fi++;
      open = undefined;
      pending = undefined;
      ls = Math.max(ls, fence.closeEnd);
      continue;
    }
    const nl = text.indexOf('\n', ls);
    const le = nl === -1 ? text.length : nl + 1;
    const line = text.slice(ls, nl === -1 ? text.length : nl).replace(/\r$/, '');
    if (open !== undefined) {
      const cells = line.trim() === '' ? undefined : splitRow(line);
      if (cells !== undefined) {
        open.table.rows.push(cells);
        open.end = le;
        ls = le;
        continue;
      }
      open = undefined;
    }
    if (pending !== undefined) {
      const align = delimiterRow(line);
      if (align !== undefined && align.length === pending.cells.length) {
        open = { start: pending.start, end: le, table: { header: pending.cells, align, rows: [] } };
        spans.push(open);
        pending = undefined;
        ls = le;
        continue;
      }
    }
    pending = undefined;
    if (headerCandidate(line)) {
      const cells = splitRow(line);
      if (cells !== undefined && cells.length > 0) pending = { start: ls, end: le, cells };
    }
    ls = le;
  }
  for (const s of spans) normalise(s.table);
  return spans;
}

/** Every row as wide as the widest (GFM drops extra cells; here nothing is dropped). */
function normalise(t: Table): void {
  let n = t.header.length;
  for (const r of t.rows) n = Math.max(n, r.length);
  const pad = (r: string[]) => {
    while (r.length < n) r.push('');
  };
  pad(t.header);
  for (const r of t.rows) pad(r);
  while (t.align.length < n) t.align.push(undefined);
}

/** Cells longer than this are shown as written (no inline Markdown read). */
export const INLINE_MAX_CELL = 500;

/** A cell's inline Markdown as plain words (code ticks, emphasis, links as `text (url)`). */
export function plainCell(cell: string): string {
  // The patterns look ahead for a closing marker: bounded cells keep a hostile row linear.
  if (cell.length > INLINE_MAX_CELL) return cell;
  return cell
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\[([^\]]*)\]\(([^)\s]*)\)/g, (_m, t: string, u: string) => (t === u || t === '' ? u : `${t} (${u})`))
    .replace(/(\*\*|__)(?=\S)(.*?\S)\1/g, '$2')
    .replace(/~~(?=\S)(.*?\S)~~/g, '$1')
    .replace(/(^|[^\w*])\*(?=\S)([^*]*?\S)\*(?!\w)/g, '$1$2')
    .replace(/(^|\W)_(?=\S)([^_]*?\S)_(?!\w)/g, '$1$2');
}

export type WidthOf = (s: string) => number;

function pad(s: string, width: number, align: Align, widthOf: WidthOf): string {
  const gap = Math.max(0, width - widthOf(s));
  if (align === 'right') return ' '.repeat(gap) + s;
  if (align === 'center') return ' '.repeat(Math.floor(gap / 2)) + s + ' '.repeat(gap - Math.floor(gap / 2));
  return s + ' '.repeat(gap);
}

/** Aligned lines of some columns: header, a rule, the rows. Trailing spaces trimmed. */
function alignedColumns(t: Table, cols: number[], widths: number[], widthOf: WidthOf): string[] {
  const line = (cells: string[]) =>
    cols
      .map((c) => pad(plainCell(cells[c] ?? ''), widths[c] ?? 0, t.align[c], widthOf))
      .join(' | ')
      .trimEnd();
  const rule = cols.map((c) => '-'.repeat(Math.max(1, widths[c] ?? 0))).join('-|-');
  return [line(t.header), rule, ...t.rows.map(line)];
}

export interface MonospaceOptions {
  widthOf: WidthOf;
  /** Widest line a block may have; a wider table is cut by columns (the first kept in each). */
  maxLineWidth: number;
}

/**
 * The table as fenced code blocks of aligned lines: one block, or (wider than `maxLineWidth`)
 * one block per group of columns, each after a line naming its columns, the first column
 * repeated so that every row can be told apart.
 */
export function monospaceTable(t: Table, opts: MonospaceOptions): string {
  const n = t.header.length;
  const widths: number[] = [];
  for (let c = 0; c < n; c++) {
    let w = opts.widthOf(plainCell(t.header[c] ?? ''));
    for (const r of t.rows) w = Math.max(w, opts.widthOf(plainCell(r[c] ?? '')));
    widths.push(w);
  }
  const total = widths.reduce((a, w) => a + w, 0) + 3 * Math.max(0, n - 1);
  const fence = (lines: string[]) => '```\n' + lines.join('\n').replace(/```/g, "'''") + '\n```';
  if (total <= opts.maxLineWidth || n <= 1) return fence(alignedColumns(t, [...Array(n).keys()], widths, opts.widthOf));
  const groups: number[][] = [];
  const first = widths[0] ?? 0;
  let cur: number[] = [0];
  let width = first;
  for (let c = 1; c < n; c++) {
    const w = (widths[c] ?? 0) + 3;
    if (cur.length > 1 && width + w > opts.maxLineWidth) {
      groups.push(cur);
      cur = [0];
      width = first;
    }
    cur.push(c);
    width += w;
  }
  groups.push(cur);
  return groups
    .map((g) => {
      const from = (g[1] ?? 1) + 1;
      const to = (g[g.length - 1] ?? 0) + 1;
      const note = `Table too wide for one block: columns 1 and ${from}–${to} of ${n}`;
      return `${note}\n${fence(alignedColumns(t, g, widths, opts.widthOf))}`;
    })
    .join('\n\n');
}
