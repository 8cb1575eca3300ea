import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { fencesBalanced } from '../core/reply/fences.js';
import { tableMarkdown } from '../emulator/replies.js';
import { monospaceMarkdown, plainParts } from './plain-parts.js';

// The plainest form of a reply: tables as aligned monospace code blocks, cut into parts that
// each balance their fences, nothing lost.

const mono = { widthOf: stringWidth, maxLineWidth: 120 };

describe('plainParts', () => {
  it('a table becomes an aligned code block, the words around it kept in order', () => {
    const md = `Before\n\n${tableMarkdown(2, 3)}\nAfter`;
    expect(monospaceMarkdown(md, mono)).toBe(
      [
        'Before',
        '',
        '```',
        'Item  | Col 2 | Col 3',
        '------|-------|------',
        'row 1 |     7 |  b1',
        'row 2 |    14 |  c2',
        '```',
        '',
        'After',
      ].join('\n'),
    );
  });

  it('a long table is cut into parts under the limit, each a balanced code block, every row once', () => {
    const parts = plainParts(`Here:\n\n${tableMarkdown(150, 3)}\nEnd.`, 1000, mono);
    expect(parts.length).toBeGreaterThan(2);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(1000);
      expect(fencesBalanced(p)).toBe(true);
    }
    const all = parts.join('\n');
    for (let i = 1; i <= 150; i++) expect(all.match(new RegExp(`^row ${i} +\\|`, 'gm'))).toHaveLength(1);
    expect(all.endsWith('End.')).toBe(true);
  });

  it('text without a table is split as the pump splits, and empty text still has a part', () => {
    expect(plainParts('short words', 100, mono)).toEqual(['short words']);
    expect(plainParts('', 100, mono)).toEqual(['…']);
  });
});
