import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type SplitPart, type SplitWork, splitOnce, splitText } from './split.js';

// Splitting does work in proportion to its input, counted (characters read, candidate cuts tried),
// not timed: pathological text at n and 4n characters costs at most ~4.5x. Each cut looks only a
// bounded distance past the limit, which gives the same parts as looking at the whole rest.

const LINK_RE = /\[[^\]\n]*\]\([^)\n]*\)/g;
const fill = (unit: string, n: number) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);

const PATHOLOGICAL: Record<string, (n: number) => string> = {
  'one 40k line of words': (n) => fill('word ', n),
  'one 40k line, no spaces': (n) => fill('a', n),
  'star-a run': (n) => fill('*a', n),
  'deep brackets': (n) => fill('[', n),
  'dense links with spaces inside': (n) => fill('[a b](x) ', n),
  'one link longer than a part': (n) => `[${fill('a ', n - 5)}](x)`,
  'fence lines': (n) => fill('```\n', n),
  'an unclosed fence': (n) => `\`\`\`ts\n${fill('x = 1;\n', n - 6)}`,
  'a long fence opener line': (n) => `\`\`\`${fill('a', n - 3)}`,
  'surrogate pairs': (n) => fill('😀', n),
  'sentence ends': (n) => fill('a.) ', n),
  'blank lines': (n) => fill('\n \n', n),
};

describe('splitting work is linear in its input', () => {
  // 39 k (a long reply) and 4x that.
  const n = 39_000;
  for (const max of [2000, 3900]) {
    for (const [name, make] of Object.entries(PATHOLOGICAL)) {
      it(`${name} (parts of ${max})`, () => {
        const work = (text: string) => {
          const w: SplitWork = { scanned: 0, tries: 0 };
          splitText(text, max, w);
          return w.scanned + w.tries;
        };
        const [small, big] = [make(n), make(4 * n)];
        expect(big.length).toBe(4 * small.length);
        expect(work(big)).toBeLessThanOrEqual(4.5 * work(small));
      });
    }
  }

  it('one cut of a 40k line costs what a cut of a 4k line does', () => {
    const cost = (text: string) => {
      const w: SplitWork = { scanned: 0, tries: 0 };
      splitOnce(text, 2000, 0, undefined, w);
      return w.scanned + w.tries;
    };
    expect(cost(fill('word ', 40_000))).toBe(cost(fill('word ', 4_100)));
  });
});

describe('link spans', () => {
  it('a cut never falls inside what the link regex finds (property)', () => {
    const piece = fc.constantFrom('[', ']', '(', ')', '\n', 'a', ' ', '[a](b)', '](');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), fc.integer({ min: 2, max: 40 }), (pieces, max) => {
        const text = pieces.join('');
        const cut = splitOnce(text, max);
        if (cut === undefined) return;
        const inside = [...text.slice(0, max + 2048).matchAll(LINK_RE)].some(
          (m) => m.index <= max && cut.consumed > m.index && cut.consumed < m.index + m[0].length,
        );
        // Only the last resort (nothing allowed) may cut inside a link: then at the limit.
        if (inside) expect(cut.consumed).toBe(max);
      }),
      { numRuns: 1000 },
    );
  });
});

/** The split as it was before windows: every cut sees the whole rest of the text. */
function unwindowed(text: string, max: number): SplitPart[] {
  const parts: SplitPart[] = [];
  let carry = '';
  let rest = text;
  for (;;) {
    const current = carry + rest;
    const cut = splitOnce(current, max, carry.length);
    if (cut === undefined) return [...parts, { text: current, reopen: carry, close: '' }];
    parts.push({ text: cut.head, reopen: carry, close: cut.close });
    rest = current.slice(cut.consumed);
    carry = cut.reopen;
  }
}

describe('a cut that looks a bounded distance ahead cuts where one seeing everything does', () => {
  const piece = fc.oneof(
    fc.constantFrom('```ts\n', '```\n', '~~~\n', '\n', '\n\n', ' ', '. ', '[a](b)', '[x y](http://e.test/p) ', '😀'),
    fc.string({ maxLength: 12 }),
    fc.integer({ min: 1, max: 3000 }).map((k) => 'w'.repeat(k)),
  );
  it('for texts with long lines, fences and links (property)', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.constantFrom(100, 500, 2000), (pieces, max) => {
        const text = pieces.join('');
        expect(splitText(text, max)).toEqual(unwindowed(text, max));
      }),
      { numRuns: 300 },
    );
  });
});
