import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fencesBalanced, findFences } from './fences.js';
import { joinParts, splitOnce, splitText } from './split.js';

/** No lone surrogate (String.prototype.isWellFormed is ES2024, beyond our lib setting). */
const wellFormed = (s: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

const texts = (parts: { text: string }[]) => parts.map((p) => p.text);

describe('splitOnce', () => {
  it('leaves text that fits alone', () => {
    expect(splitOnce('hello', 5)).toBeUndefined();
    expect(splitText('hello', 5)).toEqual([{ text: 'hello', reopen: '', close: '' }]);
  });

  it('prefers a paragraph break, then a line break, then a sentence end, then a space, near the limit', () => {
    const para = `${'a'.repeat(64)}\n\nb\n${'c'.repeat(30)}`;
    expect(splitOnce(para, 70)?.head).toBe(`${'a'.repeat(64)}\n\n`);
    const line = `${'a'.repeat(56)}\n${'b'.repeat(40)}`;
    expect(splitOnce(line, 60)?.head).toBe(`${'a'.repeat(56)}\n`);
    const sentence = 'One two three four five six. Seven eight nine ten';
    expect(splitOnce(sentence, 30)?.head).toBe('One two three four five six. ');
    const words = 'alpha beta gamma delta epsilon zeta';
    expect(splitOnce(words, 20)?.head).toBe('alpha beta gamma ');
  });

  it('keeps what a streamed message showed: a boundary in the last tenth beats a better one further back', () => {
    const text = `${'a'.repeat(40)}\n\n${'b '.repeat(40)}`;
    // The paragraph break at 42 of 100 would cut back more than half of a full message.
    expect(splitOnce(text, 100)?.head.length).toBeGreaterThanOrEqual(90);
    // With no boundary in the last tenth, the best one from 30% on.
    const sparse = `${'a'.repeat(40)}\n\n${'b'.repeat(80)}`;
    expect(splitOnce(sparse, 100)?.head).toBe(`${'a'.repeat(40)}\n\n`);
  });

  it('never cuts after maxCut (a note appended to the text stays whole)', () => {
    const text = `${'a'.repeat(50)} tail\n\n_(reply interrupted)_`;
    const noteAt = text.indexOf('\n\n_(');
    expect(splitOnce(text, 64, 0, noteAt)?.head).toBe(`${'a'.repeat(50)} tail`);
  });

  it('hard cuts a word without a boundary, never inside a surrogate pair', () => {
    const s = '😀'.repeat(10); // 20 UTF-16 units
    const cut = splitOnce(s, 7);
    expect(cut?.head).toBe('😀😀😀');
    expect(cut?.consumed).toBe(6);
  });

  it('does not cut inside a Markdown link', () => {
    const s = `see [the documentation page](https://example.com/a/b/c) for more`;
    const cut = splitOnce(s, 30);
    expect(cut?.head).toBe('see ');
  });

  it('closes a fence it cuts and reopens it with the same info string', () => {
    const code = Array.from({ length: 10 }, (_, i) => `const v${i} = ${i};`).join('\n');
    const s = `Intro\n\n\`\`\`ts\n${code}\n\`\`\`\nafter`;
    const parts = splitText(s, 80);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts[0]?.text.endsWith('\n```')).toBe(true);
    expect(parts[1]?.text.startsWith('```ts\n')).toBe(true);
    for (const p of parts) {
      expect(p.text.length).toBeLessThanOrEqual(80);
      expect(fencesBalanced(p.text)).toBe(true);
    }
    expect(joinParts(parts)).toBe(s);
  });

  it('keeps a longer ~~~~ marker when closing', () => {
    const s = `~~~~python\n${'x = 1\n'.repeat(20)}~~~~\n`;
    const parts = splitText(s, 50);
    expect(parts[0]?.text.endsWith('~~~~')).toBe(true);
    expect(parts[1]?.text.startsWith('~~~~python\n')).toBe(true);
    expect(joinParts(parts)).toBe(s);
  });

  it('moves a whole code block to the next part rather than cutting it, when a paragraph break allows', () => {
    const s = `${'word '.repeat(10)}\n\n\`\`\`\n${'line\n'.repeat(5)}\`\`\`\n`;
    const parts = texts(splitText(s, 60));
    expect(parts[0]).toBe(`${'word '.repeat(10)}\n\n`);
    expect(parts[1]?.startsWith('```\n')).toBe(true);
  });

  it('cuts an unclosed fence (a stream still in progress) with close and reopen', () => {
    const s = `\`\`\`js\n${'a();\n'.repeat(30)}`;
    const cut = splitOnce(s, 40);
    expect(cut?.head.endsWith('```')).toBe(true);
    expect(cut?.reopen).toBe('```js\n');
  });
});

describe('a code block over three parts and more', () => {
  // Expected values written out. Each part after the first reopens the fence with its info string
  // and each part the block goes on from closes it: on a line of its own after a cut inside a line,
  // right after the newline otherwise. Without those, the parts join to the input exactly.
  const code = Array.from({ length: 9 }, (_, i) => `let v${i} = ${i};`).join('\n');
  const input = `Intro:\n\`\`\`ts\n${code}\n\`\`\`\nDone.`;
  const expected = [
    'Intro:\n```ts\nlet v0 = 0;\nlet v1 = 1;\nlet v2 \n```',
    '```ts\n= 2;\nlet v3 = 3;\nlet v4 = 4;\nlet v5 = \n```',
    '```ts\n5;\nlet v6 = 6;\nlet v7 = 7;\n```',
    '```ts\nlet v8 = 8;\n```\nDone.',
  ];

  it('four parts, each closed and reopened', () => {
    expect(texts(splitText(input, 48))).toEqual(expected);
  });

  it('the parts without the added fence lines are the input, character for character', () => {
    const added: Array<[string, string]> = [
      ['', '\n```'],
      ['```ts\n', '\n```'],
      ['```ts\n', '```'],
      ['```ts\n', ''],
    ];
    const parts = splitText(input, 48);
    const bodies = parts.map((p, i) => {
      const [reopen, close] = added[i] as [string, string];
      expect(p.text.startsWith(reopen) && p.text.endsWith(close)).toBe(true);
      expect([p.reopen, p.close]).toEqual([reopen, close]);
      return p.text.slice(reopen.length, p.text.length - close.length);
    });
    expect(bodies.join('')).toBe(input);
  });

  it('one code line longer than three parts is hard cut, each part a closed block', () => {
    const long = `\`\`\`\n${'x'.repeat(70)}\n\`\`\``;
    const parts = splitText(long, 30);
    const x22 = 'x'.repeat(22);
    expect(texts(parts)).toEqual([
      `\`\`\`\n${x22}\n\`\`\``,
      `\`\`\`\n${x22}\n\`\`\``,
      `\`\`\`\n${x22}\n\`\`\``,
      '```\nxxxx\n```',
    ]);
    // Strip 4 chars ('\n```') from the end of the first three and 4 ('```\n') from the start of the last three.
    const bodies = parts.map((p, i) => p.text.slice(i === 0 ? 0 : 4, i === parts.length - 1 ? undefined : -4));
    expect(bodies.join('')).toBe(long);
  });

  it('a streamed reply whose open fence spans five parts keeps every character', () => {
    const lines = Array.from({ length: 40 }, (_, i) => `step(${i});`);
    const streaming = `\`\`\`js\n${lines.join('\n')}`; // no closing fence yet
    const parts = splitText(streaming, 60);
    expect(parts.length).toBeGreaterThanOrEqual(5);
    for (const [i, p] of parts.entries()) {
      if (i > 0) expect(p.text.startsWith('```js\nstep(')).toBe(true);
      // Cut at a line end (short lines): the closing fence follows the line's own newline.
      if (i < parts.length - 1) expect(p.text.endsWith(');\n```')).toBe(true);
    }
    const bodies = parts.map((p, i) => p.text.slice(i === 0 ? 0 : 6, i === parts.length - 1 ? undefined : -3));
    expect(bodies.join('')).toBe(streaming);
  });
});

// ---- property tests over random Markdown ----

const word = fc.oneof(
  fc.constantFrom(
    'the',
    'a',
    'reply',
    'stream',
    'bridge',
    'x',
    'long-word-without-breaks',
    '😀',
    'naïve',
    '**bold**',
    '`code`',
  ),
  fc.string({ minLength: 1, maxLength: 12, unit: fc.constantFrom('a', 'b', 'z', '1', '-', '😀', 'é') }),
  fc.constant('[a link](https://example.com/path)'),
);
const sentence = fc
  .array(word, { minLength: 1, maxLength: 14 })
  .chain((ws) => fc.constantFrom('.', '!', '?', '').map((end) => `${ws.join(' ')}${end}`));
const paragraph = fc.array(sentence, { minLength: 1, maxLength: 5 }).map((ss) => ss.join(' '));
const listBlock = fc.array(sentence, { minLength: 1, maxLength: 5 }).map((ss) => ss.map((s) => `- ${s}`).join('\n'));
const codeLine = fc.oneof(
  fc.string({ maxLength: 60, unit: fc.constantFrom('a', ' ', '(', ')', ';', '{', '}', '`', '~', '😀', '=') }),
  fc.constant('``'),
  fc.constant('~~~ not a closer for backticks'),
);
const codeBlock = fc
  .record({
    marker: fc.constantFrom('```', '~~~', '````'),
    info: fc.constantFrom('', 'ts', 'python', 'json title="x"'),
    lines: fc.array(codeLine, { maxLength: 25 }),
  })
  .map(({ marker, info, lines }) => {
    // A code line must not close the block early: keep lines that look like the marker out.
    const body = lines.filter((l) => !l.trim().startsWith(marker.slice(0, 3)));
    return `${marker}${info}\n${body.map((l) => `${l}\n`).join('')}${marker}`;
  });
const markdown = fc
  .array(fc.oneof(paragraph, listBlock, codeBlock), { minLength: 1, maxLength: 12 })
  .chain((blocks) =>
    fc
      .array(fc.constantFrom('\n\n', '\n', '\n\n\n'), { minLength: blocks.length, maxLength: blocks.length })
      .map((seps) => blocks.map((b, i) => b + (seps[i] ?? '')).join('')),
  );

describe('splitText properties', () => {
  it('every part fits, fences are balanced in every part, and the parts rebuild the input', () => {
    fc.assert(
      fc.property(markdown, fc.integer({ min: 60, max: 600 }), (md, max) => {
        expect(fencesBalanced(md)).toBe(true);
        const parts = splitText(md, max);
        for (const p of parts) {
          expect(p.text.length).toBeLessThanOrEqual(max);
          expect(p.text.length).toBeGreaterThan(0);
          expect(fencesBalanced(p.text)).toBe(true);
          expect(wellFormed(p.text)).toBe(true);
        }
        expect(joinParts(parts)).toBe(md);
        // a link that fits in a part is never broken
        for (const link of md.match(/\[[^\]\n]*\]\([^)\n]*\)/g) ?? []) {
          if (link.length < max / 2) expect(parts.some((p) => p.text.includes(link))).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('reconstruction holds for arbitrary strings and small limits too', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400, unit: 'grapheme' }), fc.integer({ min: 1, max: 50 }), (s, max) => {
        const parts = splitText(s, max);
        for (const p of parts) expect(p.text.length).toBeLessThanOrEqual(max);
        expect(joinParts(parts)).toBe(s);
      }),
      { numRuns: 300 },
    );
  });
});

describe('findFences', () => {
  // The regexes on every line, as findFences was before it skipped lines that cannot be fences.
  const everyLine = (text: string) => {
    const out: Array<{ openStart: number; closeStart: number; closeEnd: number; opener: string }> = [];
    let open: { openStart: number; opener: string; marker: string } | undefined;
    let start = 0;
    for (const line of text.split('\n')) {
      const next = Math.min(text.length, start + line.length + 1);
      if (open === undefined) {
        const m = /^( {0,3})(`{3,}|~{3,})(.*)$/.exec(line);
        const marker = m?.[2];
        if (m && marker && !(marker[0] === '`' && (m[3] ?? '').includes('`')))
          open = { openStart: start, opener: line, marker };
      } else {
        const marker = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line)?.[1];
        if (marker && marker[0] === open.marker[0] && marker.length >= open.marker.length) {
          out.push({ openStart: open.openStart, closeStart: start, closeEnd: next, opener: open.opener });
          open = undefined;
        }
      }
      start = next;
    }
    if (open)
      out.push({ openStart: open.openStart, closeStart: text.length, closeEnd: text.length, opener: open.opener });
    return out;
  };

  it('finds what the fence regexes find on every line', () => {
    const piece = fc.constantFrom(
      '```',
      '~~~',
      '````',
      ' ',
      '   ',
      '    ',
      '\t',
      '\n',
      '\r\n',
      'ts',
      '`',
      '~',
      'a b',
      '',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (ps) => {
        const text = ps.join('');
        const got = findFences(text).map(({ openStart, closeStart, closeEnd, opener }) => ({
          openStart,
          closeStart,
          closeEnd,
          opener,
        }));
        expect(got).toEqual(everyLine(text));
      }),
      { numRuns: 2000 },
    );
  });
});
