import { closesFence, fenceOpener } from './fences.js';
import { delimiterRow, findTables, headerCandidate, splitRow, type Align, type Table } from './table-parser.js';

// Markdown tables as aligned monospace lines, for platforms without a table (Discord, Slack beyond
// its table block's limits): one table rendered (monospaceTable), and a reply's stream with each
// table rendered once it is complete (monospaceTableStream). Platform-neutral: the display-width
// function is given by the caller. Finding tables is table-parser.ts's (findTables).

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

// A reply's text deltas with every Markdown table replaced, once it is complete, by aligned
// monospace blocks (monospaceTable), for a platform that has no table (ReplySink.monospaceTables).
// Text streams through as it comes, except a line with a pipe: it waits for its end, and, when it
// may be a table's header, for the next line; a table is held until its last row (a half-written
// table is not shown). A line that streamed before its first pipe arrived is text: a header
// without outer pipes whose first cell came alone shows as written. Each character is looked at
// a constant number of times.

/** What the source returns at its end (a reply's end note) is returned at the stream's end. */
export function monospaceTableStream<R>(
  source: AsyncIterable<string, R>,
  opts: MonospaceOptions,
): AsyncIterable<string, R> {
  const tables = new TableRewriter(opts);
  return {
    async *[Symbol.asyncIterator](): AsyncGenerator<string, R> {
      let end: R;
      try {
        end = yield* mapDeltas(source, (delta) => tables.take(delta));
      } catch (err) {
        // The source failed: what it gave is shown (a table so far as a table) before the error.
        const rest = tables.finish();
        if (rest !== '') yield rest;
        throw err;
      }
      const rest = tables.finish();
      if (rest !== '') yield rest;
      return end;
    },
  };
}

/**
 * Each delta of `source` through `take`, what it gives yielded, the source's return value
 * returned. Not for-await, which drops that value; like it, the source is closed when the reader
 * leaves early, and not when the source itself threw or ended.
 */
async function* mapDeltas<R>(
  source: AsyncIterable<string, R>,
  take: (delta: string) => string | undefined,
): AsyncGenerator<string, R> {
  const it = source[Symbol.asyncIterator]();
  let settled = false;
  try {
    for (;;) {
      let next: IteratorResult<string, R>;
      try {
        next = await it.next();
      } catch (err) {
        settled = true;
        throw err;
      }
      if (next.done === true) {
        settled = true;
        return next.value;
      }
      const shown = take(next.value);
      if (shown !== undefined) yield shown;
    }
  } finally {
    if (!settled) await it.return?.();
  }
}

/**
 * The stream's state, line by line: what is held back (a line that may be a table's header, a
 * table until its last row) and what may be shown. `take` a delta, `finish` at the end.
 */
class TableRewriter {
  /** What may be shown, not yet given out. */
  private out = '';
  /** The current line's start, not yet judged. */
  private buf = '';
  /** The start of the current (unfinished) line, already passed through: the line is no table. */
  private passing: string | false = false;
  /** The marker of the code fence the text is in. */
  private fence: string | undefined;
  /** A line that may be a table's header, waiting for the next (a delimiter row or not). */
  private held: { line: string; cells: number } | undefined;
  /** The lines of a table, held until its last row. */
  private table: string[] | undefined;

  constructor(private readonly opts: MonospaceOptions) {}

  /** One delta in: what may be shown now, if anything. */
  take(delta: string): string | undefined {
    this.buf += delta;
    let nl = this.buf.indexOf('\n');
    let from = 0;
    while (nl !== -1) {
      this.line(this.buf.slice(from, nl + 1));
      from = nl + 1;
      nl = this.buf.indexOf('\n', from);
    }
    this.buf = this.buf.slice(from);
    const quiet = this.table === undefined && this.held === undefined;
    if (this.buf !== '' && quiet && (this.passing !== false || !this.buf.includes('|'))) {
      this.passing = (this.passing === false ? '' : this.passing) + this.buf;
      this.out += this.buf;
      this.buf = '';
    }
    return this.out === '' ? undefined : this.drain();
  }

  /** The end: the unfinished line and everything held, as it will be shown ('' when nothing). */
  finish(): string {
    if (this.buf !== '') this.line(this.buf);
    this.buf = '';
    this.flushTable();
    this.flushHeld();
    return this.drain();
  }

  private drain(): string {
    const d = this.out;
    this.out = '';
    return d;
  }

  /** One whole line (with its newline, unless the text ended): shown, held, or added to a table. */
  private line(l: string): void {
    if (this.passing !== false) {
      this.out += l;
      this.fenceLine((this.passing + l).replace(/\r?\n$/, ''));
      this.passing = false;
      return;
    }
    const bare = l.replace(/\r?\n$/, '');
    if (this.fence !== undefined) {
      this.out += l;
      this.fenceLine(bare);
      return;
    }
    if (this.table !== undefined) {
      if (splitRow(bare) !== undefined) {
        this.table.push(l);
        return;
      }
      this.flushTable();
    }
    if (this.held !== undefined) {
      const align = delimiterRow(bare);
      if (align !== undefined && align.length === this.held.cells) {
        this.table = [this.held.line, l];
        this.held = undefined;
        return;
      }
      this.flushHeld();
    }
    if (fenceOpener(bare) !== undefined) {
      this.fenceLine(bare);
      this.out += l;
      return;
    }
    if (this.holdsHeader(l, bare)) return;
    this.out += l;
  }

  /** A line that may be a table's header is held for the next one. */
  private holdsHeader(l: string, bare: string): boolean {
    if (!headerCandidate(bare)) return false;
    const cells = splitRow(bare);
    if (cells === undefined || cells.length === 0) return false;
    this.held = { line: l, cells: cells.length };
    return true;
  }

  /** A line already shown, or about to be: only fences matter. */
  private fenceLine(bare: string): void {
    if (this.fence === undefined) this.fence = fenceOpener(bare);
    else if (closesFence(bare, this.fence)) this.fence = undefined;
  }

  private flushTable(): void {
    if (this.table === undefined) return;
    const raw = this.table.join('');
    this.table = undefined;
    const span = findTables(raw)[0];
    if (span === undefined) this.out += raw;
    else this.out += monospaceTable(span.table, this.opts) + (raw.endsWith('\n') ? '\n' : '');
  }

  private flushHeld(): void {
    if (this.held !== undefined) this.out += this.held.line;
    this.held = undefined;
  }
}
