import { findTables, type MonospaceOptions, monospaceTable, splitRow, delimiterRow } from './tables.js';

// A reply's text deltas with every Markdown table replaced, once it is complete, by aligned
// monospace blocks (monospaceTable), for a platform that has no table (ReplySink.monospaceTables).
// Lines stream through as they end; a line that may be a table's header waits for the next one,
// and a table is held until its last row (a half-written table is not shown). A long line without
// a pipe streams before it ends. Each character is looked at a constant number of times.

const OPEN = /^ {0,3}(`{3,}|~{3,})/;
const CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
/** An unfinished line longer than this, with no pipe, is a paragraph: it streams before it ends. */
const PARTIAL_AFTER = 200;

export function monospaceTableStream(source: AsyncIterable<string>, opts: MonospaceOptions): AsyncIterable<string> {
  let out = '';
  let buf = '';
  /** Characters of the current (unfinished) line already passed through: the line is no table. */
  let passing = false;
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

  const line = (l: string) => {
    if (passing) {
      passing = false;
      out += l;
      return;
    }
    const bare = l.replace(/\r?\n$/, '');
    if (fence !== undefined) {
      out += l;
      const m = CLOSE.exec(bare);
      if (m?.[1] !== undefined && m[1][0] === fence[0] && m[1].length >= fence.length) fence = undefined;
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
    const open = OPEN.exec(bare);
    if (open?.[1] !== undefined) {
      fence = open[1];
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
    async *[Symbol.asyncIterator]() {
      for await (const delta of source) {
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
        if (buf !== '' && quiet && (passing || (buf.length > PARTIAL_AFTER && !buf.includes('|')))) {
          passing = true;
          out += buf;
          buf = '';
        }
        if (out !== '') {
          const d = out;
          out = '';
          yield d;
        }
      }
      if (buf !== '') line(buf);
      buf = '';
      flushTable();
      flushHeld();
      if (out !== '') yield out;
    },
  };
}
