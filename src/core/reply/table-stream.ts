import { findTables, type MonospaceOptions, monospaceTable, splitRow, delimiterRow } from './tables.js';

// A reply's text deltas with every Markdown table replaced, once it is complete, by aligned
// monospace blocks (monospaceTable), for a platform that has no table (ReplySink.monospaceTables).
// Text streams through as it comes, except a line with a pipe: it waits for its end, and, when it
// may be a table's header, for the next line; a table is held until its last row (a half-written
// table is not shown). A line that streamed before its first pipe arrived is text: a header
// without outer pipes whose first cell came alone shows as written. Each character is looked at
// a constant number of times.

const OPEN = /^ {0,3}(`{3,}|~{3,})/;
const CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

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
    if (fence === undefined) {
      fence = OPEN.exec(bare)?.[1];
      return;
    }
    const m = CLOSE.exec(bare);
    if (m?.[1] !== undefined && m[1][0] === fence[0] && m[1].length >= fence.length) fence = undefined;
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
      if (bare.trim() !== '' && splitRow(bare) !== undefined) {
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
    if (OPEN.test(bare)) {
      fenceLine(bare);
      out += l;
      return;
    }
    if (bare.includes('|') && !/^( {4}|\t)/.test(bare)) {
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
