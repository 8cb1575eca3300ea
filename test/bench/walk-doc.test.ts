import { describe, expect, it } from 'vitest';
import { rewriteWalk } from '../../bench/walk-doc.js';

// `npm run bench -- --path-only --write-walk` must keep a hand-written "sometimes" note of a file
// that still exists, drop the notes of files gone from src, and keep the count sentence true.

const doc = [
  '# Doc',
  '',
  'One mention: 3 files, 2 more sometimes.',
  '',
  '```walk slack',
  'src/a.ts',
  'src/core/place.ts  (sometimes: on its own timer)',
  'src/gone/away.ts  (sometimes: a file that was merged)',
  'src/b.ts',
  '```',
  '',
  'After.',
].join('\n');

describe('rewriteWalk', () => {
  it('lists the measured files, keeps live notes, drops notes of files gone, and counts', () => {
    const out = rewriteWalk(doc, 'slack', ['src/c.ts', 'src/a.ts']);
    expect(out).toContain('One mention: 2 files, 1 more sometimes.');
    expect(out).toContain(
      '```walk slack\nsrc/a.ts\nsrc/c.ts\nsrc/core/place.ts  (sometimes: on its own timer)\n```\n\nAfter.',
    );
    expect(out).not.toContain('src/gone/away.ts');
    expect(out.startsWith('# Doc\n')).toBe(true);
  });

  it('says which block is missing', () => {
    expect(() => rewriteWalk(doc, 'discord', [])).toThrow(/walk discord/);
  });
});
