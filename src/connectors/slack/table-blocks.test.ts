import { describe, expect, it } from 'vitest';
import { blocksError } from '../../../test/fakes/slack/limits.js';
import { renderMrkdwn } from './render.js';
import { createTableCarry } from './reply-sink-edit.js';
import { cellElements, renderWithTables, tableMessage, tableMessageBlocks } from './table-blocks.js';

// Slack's rendering of Markdown tables: one table block per message, the text around it in
// sections, a second table (or one beyond the block's limits) in monospace, nothing lost.

describe('tableMessage and tableMessageBlocks', () => {
  const md = 'A\n\n| x | y |\n|---|:-:|\n| 1 | 2 |\n\nB\n\n| p | q |\n|---|---|\n| <!channel> | & |\n\nC';

  it('one table block, in the attachment with all after it; a second table is monospace', () => {
    const rich = tableMessage(md, renderMrkdwn);
    expect(rich?.blocks.map((b) => b.type)).toEqual(['section']);
    expect(rich?.attachment.map((b) => b.type)).toEqual(['table', 'section', 'section', 'section']);
    const code = (rich?.attachment[2] as { text: { text: string } }).text.text;
    expect(code).toBe('```\np          | q\n-----------|--\n&lt;!channel&gt; | &amp;\n```');
    expect(blocksError([...(rich?.blocks ?? []), ...(rich?.attachment ?? [])])).toBeUndefined();
    expect(tableMessage('no table | here', renderMrkdwn)).toBeUndefined();
  });

  it('without a table block (the rich form refused): every table monospace, in order', () => {
    const blocks = tableMessageBlocks(md, renderMrkdwn) ?? [];
    expect(blocks.map((b) => b.type)).toEqual(['section', 'section', 'section', 'section', 'section']);
    expect((blocks[1] as { text: { text: string } }).text.text).toContain('x | y');
    expect(blocksError(blocks)).toBeUndefined();
    expect(tableMessageBlocks('no table | here', renderMrkdwn)).toBeUndefined();
  });

  it('inline Markdown in a cell becomes rich text: code, bold, web links only', () => {
    expect(cellElements('see [docs](https://x.test/a) and `f()` **now**')).toEqual([
      { type: 'text', text: 'see ' },
      { type: 'link', url: 'https://x.test/a', text: 'docs' },
      { type: 'text', text: ' and ' },
      { type: 'text', text: 'f()', style: { code: true } },
      { type: 'text', text: ' ' },
      { type: 'text', text: 'now', style: { bold: true } },
    ]);
    expect(cellElements('[x](javascript:alert(1))')).toBeUndefined();
    expect(cellElements('plain')).toBeUndefined();
  });

  it('the notification text holds every cell, compactly', () => {
    expect(renderWithTables('Hi\n\n| a | b |\n|---|---|\n| **x** | y & z |\n', renderMrkdwn)).toBe(
      'Hi\n\na | b\nx | y &amp; z',
    );
  });
});

describe('createTableCarry', () => {
  it('puts the header back before rows that continue the previous part’s table', () => {
    const carry = createTableCarry();
    expect(carry('T\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n', 0)).toBe('T\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n');
    expect(carry('| 3 | 4 |\n\nEnd', 1)).toBe('| a | b |\n|:--|--:|\n| 3 | 4 |\n\nEnd');
    expect(carry('| 5 | 6 |', 2)).toBe('| 5 | 6 |');
  });
});
