import { describe, expect, it } from 'vitest';
import { hasTable, streamChunks, streamView } from './stream-tables.js';

// A native stream's table: held back while it may grow, then one `blocks` chunk in its place.

const TABLE = '| a | b |\n| --- | --- |\n| 1 | 2 |\n';

describe('streamView', () => {
  it('holds back rows that may start a table while the text grows', () => {
    expect(streamView('Here:\n\n| a | b |\n', false).shown).toBe('Here:\n\n');
    expect(streamView('Here:\n\n| a | b |\n| --- | --- |\n| 1 |', false).shown).toBe('Here:\n\n');
    expect(streamView(`Here:\n\n${TABLE}`, false)).toEqual({ shown: 'Here:\n\n', tables: [] });
  });

  it('shows a whole table as a marker once words follow it, or the text is final', () => {
    const growing = streamView(`Here:\n\n${TABLE}\nAfter `, false);
    expect(hasTable(growing.shown)).toBe(true);
    expect(growing.tables).toHaveLength(1);
    expect(growing.shown.startsWith('Here:\n\n')).toBe(true);
    const final = streamView(`Here:\n\n${TABLE}`, true);
    expect(hasTable(final.shown)).toBe(true);
    // Each step's shown text starts with the one before: appends only.
    expect(growing.shown.startsWith(streamView(`Here:\n\n| a | b |\n`, false).shown)).toBe(true);
  });

  it('leaves text without a table as it renders, and keeps a prose line with a pipe once a line follows', () => {
    expect(streamView('no table here ', false)).toEqual({ shown: 'no table here ', tables: [] });
    expect(streamView('a | b\nnext ', false).shown).toBe('a | b\nnext ');
  });
});

describe('streamChunks', () => {
  it('sends the words as markdown_text and the marker as a table block, in order', () => {
    const view = streamView(`Here:\n\n${TABLE}\nAfter.`, true);
    const chunks = streamChunks(view.shown, view.tables);
    expect(chunks.map((c) => c.type)).toEqual(['markdown_text', 'blocks', 'markdown_text']);
    expect(chunks[0]).toEqual({ type: 'markdown_text', text: 'Here:\n\n' });
    const block = chunks[1]?.type === 'blocks' ? chunks[1].blocks[0] : undefined;
    expect(block?.type).toBe('table');
    expect(chunks[2]).toEqual({ type: 'markdown_text', text: '\nAfter.' });
  });
});
