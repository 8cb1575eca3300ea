import fc from 'fast-check';
import slackifyMarkdown from 'slackify-markdown';
import { describe, expect, it } from 'vitest';
import { createMrkdwnRenderer, LIBRARY_MAX_BLOCK, neutraliseMrkdwn, newRenderWork, type RenderWork } from './render.js';

// Slack rendering does work in proportion to its input, counted (calls into the Markdown library,
// the characters and markup they get, characters read by the hand-written passes), not timed:
// pathological Markdown at n and 4n characters costs at most ~4.5x. Ordinary Markdown renders
// block by block exactly as the library renders the whole document, and a streaming reply's
// finished blocks are not rendered again on the next edit.

/** The library's worst case on what it was given: characters plus markup squared, and the passes. */
const cost = (w: RenderWork) => w.libraryChars + w.libraryMarkupSquared + w.scanned;

function workFor(text: string): RenderWork {
  const work = newRenderWork();
  createMrkdwnRenderer({ work })(text);
  return work;
}

const fill = (unit: string, n: number) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);

const PATHOLOGICAL: Record<string, (n: number) => string> = {
  'star-a run': (n) => fill('*a', n),
  'underscore-a run': (n) => fill('_a', n),
  'backtick-a run': (n) => fill('`a', n),
  'deep brackets': (n) => fill('[', n),
  'unclosed links': (n) => fill('[a](', n),
  'long emphasis runs': (n) => fill('**a*', n),
  'unclosed star then text': (n) => `*${fill('word ', n - 1)}`,
  'one 40k line of words': (n) => fill('word ', n),
  'angle brackets and entities': (n) => fill('<&a', n),
  'nested quotes and lists': (n) => fill('> - ', n),
  'nested ordered lists': (n) => fill('1. ', n),
  'short lines': (n) => fill('a *b*\n', n),
  'star-a lines': (n) => fill('*a\n', n),
  'a long list': (n) => fill('- **a** `b` [c](http://d.test)\n', n),
  'paragraphs of star-a': (n) => fill(`${'*a'.repeat(40)}\n\n`, n),
  'paragraphs just under the markup bound': (n) => fill(`${'*a '.repeat(21)}${'word '.repeat(30)}\n\n`, n),
  'whitespace run before text': (n) => `${' '.repeat(n - 1)}x`,
  'blank lines before text': (n) => `${'\n'.repeat(n - 1)}x`,
  'unclosed fence': (n) => `\`\`\`ts\n${fill('*a', n - 6)}`,
  'fence lines': (n) => fill('```\n', n),
};

describe('Slack rendering work is linear in its input', () => {
  const n = 9750;
  for (const [name, make] of Object.entries(PATHOLOGICAL)) {
    it(name, () => {
      const small = make(n);
      const big = make(4 * n);
      expect(big.length).toBe(4 * small.length);
      const [ws, wb] = [workFor(small), workFor(big)];
      expect(cost(wb)).toBeLessThanOrEqual(4.5 * cost(ws));
      // No block the library gets is large.
      expect(wb.libraryChars).toBeLessThanOrEqual(wb.libraryCalls * LIBRARY_MAX_BLOCK);
    });
  }

  it('a 39,000-character star-a reply never reaches the library', () => {
    const w = workFor(fill('*a', 39_000));
    expect(w.libraryCalls).toBe(0);
  });
});

describe('a streaming reply renders only what changed', () => {
  const paragraph = (i: number) => `Step ${i}: run **build** then \`test\`, see [docs](http://d.test/${i}).`;
  const reply = Array.from({ length: 400 }, (_, i) => paragraph(i)).join('\n\n');

  it('library work stays in proportion to the reply over many edits', () => {
    const work = newRenderWork();
    const render = createMrkdwnRenderer({ work });
    let last = '';
    const step = 200;
    for (let end = step; end < reply.length + step; end += step) last = render(reply.slice(0, end));
    const edits = Math.ceil(reply.length / step);
    // Each finished block once, plus the block still growing on each edit.
    expect(work.libraryChars).toBeLessThanOrEqual(reply.length + edits * (paragraph(400).length + step));
    // Rendering from scratch would have given the library about edits * reply.length / 2.
    expect(work.libraryChars).toBeLessThan((edits * reply.length) / 20);
    expect(last).toBe(createMrkdwnRenderer()(reply));
  });

  it('the cache is bounded', () => {
    const work = newRenderWork();
    const render = createMrkdwnRenderer({ work, cacheChars: 1000 });
    render(reply);
    const first = work.libraryCalls;
    render(reply);
    // Nearly all were evicted: rendered again.
    expect(work.libraryCalls).toBeGreaterThan(first + first / 2);
  });
});

// Ordinary Markdown, as models write it: what the library makes of the whole document is the
// oracle for the block-by-block rendering. One difference is on purpose: the library's writer
// separates a list from a code block after it with an empty HTML comment, which Slack would show
// as `<!---->`; rendered alone, the code block needs none.
const whole = (d: string) =>
  neutraliseMrkdwn(slackifyMarkdown(d))
    .trimEnd()
    .replace(/&lt;!----&gt;\n\n/g, '');
const inline = fc.constantFrom(
  'plain words here',
  '**bold** text',
  '_italic_ and *also*',
  '`code < b`',
  '[a link](http://x.test/p?a=1&b=2)',
  '~~gone~~',
  'a & b',
  'x > y',
  '@channel',
  '<!here>',
  'end.',
);
const line = fc.array(inline, { minLength: 1, maxLength: 5 }).map((a) => a.join(' '));
const block = fc.oneof(
  line,
  line.map((l) => `# ${l}`),
  line.map((l) => `### ${l}`),
  fc.array(line, { minLength: 1, maxLength: 4 }).map((ls) => ls.map((l) => `- ${l}`).join('\n')),
  fc.array(line, { minLength: 1, maxLength: 4 }).map((ls) => ls.map((l, i) => `${i + 1}. ${l}`).join('\n')),
  fc.array(line, { minLength: 1, maxLength: 3 }).map((ls) => ls.map((l) => `> ${l}`).join('\n')),
  fc.array(line, { minLength: 1, maxLength: 3 }).map((ls) => ls.join('\n')),
  fc
    .tuple(fc.constantFrom('', 'ts', 'py'), fc.array(line, { maxLength: 3 }))
    .map(([lang, ls]) => `\`\`\`${lang}\n${ls.join('\n\n')}\n\`\`\``),
  fc.array(line, { minLength: 1, maxLength: 2 }).map((ls) => `- ${ls[0]}\n\n  ${ls.at(-1)}`),
);
const doc = fc
  .tuple(fc.array(block, { minLength: 1, maxLength: 8 }), fc.constantFrom('\n\n', '\n\n\n'))
  .map(([bs, sep]) => bs.join(sep));

describe('block-by-block rendering equals whole-document rendering', () => {
  it('for ordinary Markdown (property)', () => {
    fc.assert(
      fc.property(doc, (d) => {
        expect(createMrkdwnRenderer()(d)).toBe(whole(d));
      }),
      // Each run renders a document of at most 8 small blocks twice (block by block and whole), at
      // ~40 ms a run with both cores busy: 1000 runs overran the 30 s test timeout there. fast-check's
      // default 100 runs take ~4 s there, room for a machine several times slower still.
      { numRuns: 100 },
    );
  });

  it('for a reply still streaming: an unclosed fence, half a paragraph', () => {
    for (const d of ['intro\n\n```ts\nconst a = 1 < 2;', 'a **bold\n\nb', 'text\n```\ncode\n```\nafter', '```ts']) {
      expect(createMrkdwnRenderer()(d)).toBe(whole(d));
    }
  });
});
