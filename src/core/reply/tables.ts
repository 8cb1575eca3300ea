import { closesFence, fenceOpener } from './fences.js';
import { delimiterRow, findTables, headerCandidate, splitRow, type Align, type Table } from './table-parser.js';

// Markdown tables as aligned monospace lines, for platforms without a table (Discord, Slack beyond
// its table block's limits): one table rendered (monospaceTable), and a reply's stream with each
// table rendered once it is complete (monospaceTableStream). Platform-neutral: the display-width
// function is given by the caller. Finding tables is split.ts's (findTables).

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
  let out = '';
  let buf = '';
  /** The start of the current (unfinished) line, already passed through: the line is no table. */
  let passing: string | false = false;
  let fence: string | undefined;
  let held: { line: string; cells: number } | undefined;
  let table: string[] | undefined;

  const flushTable = () => {
    if (table === undefined) return;
    const raw = table.join('');
    table = undefined;
    const span = findTables(raw)[0];
    if (span === undefined) out += raw;
    else out += monospaceTable(span.table, opts) + (raw.endsWith('\n') ? '\n' : '');
  };
  const flushHeld = () => {
    if (held !== undefined) out += held.line;
    held = undefined;
  };

  /** A line already shown, or about to be: only fences matter. */
  const fenceLine = (bare: string) => {
    if (fence === undefined) fence = fenceOpener(bare);
    else if (closesFence(bare, fence)) fence = undefined;
  };

  const line = (l: string) => {
    if (passing !== false) {
      out += l;
      fenceLine((passing + l).replace(/\r?\n$/, ''));
      passing = false;
      return;
    }
    const bare = l.replace(/\r?\n$/, '');
    if (fence !== undefined) {
      out += l;
      fenceLine(bare);
      return;
    }
    if (table !== undefined) {
      if (splitRow(bare) !== undefined) {
        table.push(l);
        return;
      }
      flushTable();
    }
    if (held !== undefined) {
      const align = delimiterRow(bare);
      if (align !== undefined && align.length === held.cells) {
        table = [held.line, l];
        held = undefined;
        return;
      }
      flushHeld();
    }
    if (fenceOpener(bare) !== undefined) {
      fenceLine(bare);
      out += l;
      return;
    }
    if (headerCandidate(bare)) {
      const cells = splitRow(bare);
      if (cells !== undefined && cells.length > 0) {
        held = { line: l, cells: cells.length };
        return;
      }
    }
    out += l;
  };

  return {
    async *[Symbol.asyncIterator](): AsyncGenerator<string, R> {
      let end: R;
      try {
        end = yield* transform();
      } catch (err) {
        // The source failed: what it gave is shown (a table so far as a table) before the error.
        finish();
        if (out !== '') yield out;
        out = '';
        throw err;
      }
      finish();
      if (out !== '') yield out;
      return end;
    },
  };

  async function* transform(): AsyncGenerator<string, R> {
    // Not for-await, which drops the source's return value; like it, the source is closed when
    // the reader leaves early, and not when the source itself threw or ended.
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

  /** One delta in: what may be shown now, if anything. */
  function take(delta: string): string | undefined {
    buf += delta;
    let nl = buf.indexOf('\n');
    let from = 0;
    while (nl !== -1) {
      line(buf.slice(from, nl + 1));
      from = nl + 1;
      nl = buf.indexOf('\n', from);
    }
    buf = buf.slice(from);
    const quiet = table === undefined && held === undefined;
    if (buf !== '' && quiet && (passing !== false || !buf.includes('|'))) {
      passing = (passing === false ? '' : passing) + buf;
      out += buf;
      buf = '';
    }
    if (out === '') return undefined;
    const d = out;
    out = '';
    return d;
  }

  function finish() {
    if (buf !== '') line(buf);
    buf = '';
    flushTable();
    flushHeld();
  }
}
