import { describe, expect, it } from 'vitest';
import { findTables } from './table-parser.js';
import { monospaceTable, monospaceTableStream } from './tables.js';

// Markdown tables found (with or without outer pipes, alignment read, none inside code) and shown
// as aligned monospace blocks, by display width, cut by columns when too wide.

const width = (s: string) => [...s].reduce((n, c) => n + (/[\u3000-\u9fff\uff00-\uffef]/.test(c) ? 2 : 1), 0);

async function streamed(chunks: string[]): Promise<string> {
  async function* src() {
    for (const c of chunks) yield c;
  }
  let out = '';
  for await (const d of monospaceTableStream(src(), { widthOf: width, maxLineWidth: 60 })) out += d;
  return out;
}

describe('findTables', () => {
  it('reads header, alignment and rows, with and without outer pipes, and skips fenced code', () => {
    const text =
      'Intro\n\n| Name | Qty |\n|:---|---:|\n| a | 1 |\n| b \\| c | 22 |\n\nx | y\n:-: | ---\n1 | 2\n\n```\n| p | q |\n|---|---|\n```\n';
    const spans = findTables(text);
    expect(spans.map((s) => s.table)).toEqual([
      {
        header: ['Name', 'Qty'],
        align: ['left', 'right'],
        rows: [
          ['a', '1'],
          ['b | c', '22'],
        ],
      },
      { header: ['x', 'y'], align: ['center', undefined], rows: [['1', '2']] },
    ]);
    expect(text.slice(spans[0]?.start, spans[0]?.end)).toBe(
      '| Name | Qty |\n|:---|---:|\n| a | 1 |\n| b \\| c | 22 |\n',
    );
  });

  it('keeps a row with more cells than the header (nothing dropped)', () => {
    expect(findTables('|a|b|\n|-|-|\n|1|2|3|\n')[0]?.table).toEqual({
      header: ['a', 'b', ''],
      align: [undefined, undefined, undefined],
      rows: [['1', '2', '3']],
    });
  });
});

describe('monospaceTable', () => {
  it('lines columns up by display width and honours alignment', () => {
    const t = findTables('| Fruit | Qty | Note |\n|---|--:|:-:|\n| 苹果 | 3 | **ok** |\n| Banana | 12 | `x` |\n')[0]!
      .table;
    expect(monospaceTable(t, { widthOf: width, maxLineWidth: 80 })).toBe(
      ['```', 'Fruit  | Qty | Note', '-------|-----|-----', '苹果   |   3 |  ok', 'Banana |  12 |  x', '```'].join(
        '\n',
      ),
    );
  });

  it('cuts a table wider than the limit by columns, the first column in each block, with a note', () => {
    const header = Array.from({ length: 6 }, (_v, i) => `column${i + 1}`);
    const md = `|${header.join('|')}|\n|${header.map(() => '---').join('|')}|\n|${header.map((h) => h.toUpperCase()).join('|')}|\n`;
    const out = monospaceTable(findTables(md)[0]!.table, { widthOf: width, maxLineWidth: 40 });
    expect(out).toContain('columns 1 and 2–4 of 6');
    expect(out).toContain('columns 1 and 5–6 of 6');
    for (const line of out.split('\n')) expect(width(line)).toBeLessThanOrEqual(60);
    for (const h of header) expect(out).toContain(h.toUpperCase());
  });
});

describe('monospaceTableStream', () => {
  it('replaces a table cut into any chunks by its aligned block, the text around it unchanged', async () => {
    const text = 'Before | not a table\n\n| a | bb |\n|---|---|\n| ccc | d |\n\nAfter.\n';
    const whole = await streamed([text]);
    expect(whole).toBe('Before | not a table\n\n```\na   | bb\n----|---\nccc | d\n```\n\nAfter.\n');
    const chars = await streamed([...text]);
    expect(chars).toBe(whole);
  });

  it('a fence streamed a character at a time still closes: the table after it is found', async () => {
    const text = 'Code:\n```\n| a | b |\n|---|---|\n```\n| x | y |\n|---|--:|\n| 1 | 22 |\n';
    const expected = 'Code:\n```\n| a | b |\n|---|---|\n```\n```\nx |  y\n--|---\n1 | 22\n```\n';
    expect(await streamed([text])).toBe(expected);
    expect(await streamed([...text])).toBe(expected);
  });

  it('a source that fails mid-table shows the table so far before the error', async () => {
    async function* failing() {
      yield 'T\n| a | b |\n|---|---|\n| 1 | 2 |\n';
      throw new Error('upstream gone');
    }
    let out = '';
    await expect(
      (async () => {
        for await (const d of monospaceTableStream(failing(), { widthOf: width, maxLineWidth: 60 })) out += d;
      })(),
    ).rejects.toThrow('upstream gone');
    expect(out).toBe('T\n```\na | b\n--|--\n1 | 2\n```\n');
  });

  it("returns its source's return value after the last text (a reply's end note), and closes a source left early", async () => {
    async function* noted(): AsyncGenerator<string, string> {
      yield '| a | b |\n|---|---|\n';
      yield '| 1 | 2 |';
      return 'capped';
    }
    const it = monospaceTableStream(noted(), { widthOf: width, maxLineWidth: 60 })[Symbol.asyncIterator]();
    const seen: IteratorResult<string, string>[] = [];
    for (let r = await it.next(); ; r = await it.next()) {
      seen.push(r);
      if (r.done === true) break;
    }
    expect(seen).toEqual([
      { done: false, value: '```\na | b\n--|--\n1 | 2\n```' },
      { done: true, value: 'capped' },
    ]);

    let closed = false;
    async function* endless(): AsyncGenerator<string> {
      try {
        for (;;) yield 'x';
      } finally {
        closed = true;
      }
    }
    for await (const d of monospaceTableStream(endless(), { widthOf: width, maxLineWidth: 60 })) if (d === 'x') break;
    expect(closed).toBe(true);
  });

  it('leaves fenced code alone and flushes a table that ends the reply', async () => {
    expect(await streamed(['```\n| a | b |\n|---|---|\n```\n', '|x|y|\n|-|-|\n|1|2|'])).toBe(
      '```\n| a | b |\n|---|---|\n```\n```\nx | y\n--|--\n1 | 2\n```',
    );
  });
});

describe('linear on hostile input', () => {
  it('a 40,000-character row of unclosed markers is found and rendered at once', () => {
    const row = `| ${'**a '.repeat(10_000)} | ${'`b '.repeat(5000)} |\n`;
    const md = `| x | y |\n|---|---|\n${row.repeat(2)}`;
    const t = findTables(md)[0]!.table;
    expect(t.rows).toHaveLength(2);
    expect(monospaceTable(t, { widthOf: width, maxLineWidth: 100 })).toContain('**a **a');
  });
});
