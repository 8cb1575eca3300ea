import { findFences } from './fences.js';

// Markdown tables (GitHub style, outer pipes optional) read from a reply's text: found in one pass
// over the lines (each split at most twice), none in fenced code. Rendered elsewhere: as monospace
// blocks (tables.ts) or Slack's table block (connectors/slack/table-blocks.ts).

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

/** The alignments of a delimiter row (`|:--|--:|`), or undefined when the line is not one. */
export function delimiterRow(line: string): Align[] | undefined {
  const cells = splitRow(line);
  if (cells === undefined || cells.length === 0) return undefined;
  const out: Align[] = [];
  for (const c of cells) {
    if (!/^:?-+:?$/.test(c)) return undefined;
    const l = c.startsWith(':');
    const r = c.endsWith(':');
    out.push(l && r ? 'center' : r ? 'right' : l ? 'left' : undefined);
  }
  return out;
}

/** A line that may be a table's header: a pipe, and not indented code. */
export const headerCandidate = (line: string): boolean => line.includes('|') && !/^( {4}|\t)/.test(line);

/** Every table of `text`, in order (none inside fenced code). */
export function findTables(text: string): TableSpan[] {
  const fences = findFences(text);
  const spans: TableSpan[] = [];
  let fi = 0;
  let ls = 0;
  let pending: { start: number; cells: string[] } | undefined;
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
      const cells = splitRow(line);
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
      if (cells !== undefined && cells.length > 0) pending = { start: ls, cells };
    }
    ls = le;
  }
  for (const s of spans) normalise(s.table);
  return spans;
}

/** Every row as wide as the widest (GFM drops extra cells; here nothing is dropped). */
function normalise(t: Table): void {
  const n = t.rows.reduce((w, r) => Math.max(w, r.length), t.header.length);
  for (const r of [t.header, ...t.rows]) while (r.length < n) r.push('');
  while (t.align.length < n) t.align.push(undefined);
}
