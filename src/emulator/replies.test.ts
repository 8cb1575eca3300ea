import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { longMarkdown, parseDirectives, replyText, splitBytes, splitText } from './replies.js';

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('directives', () => {
  it('reads every directive, case-insensitively, the first of each name', () => {
    expect(
      parseDirectives('hi [long 500] [CHUNKS 3] [delay 7] [cut 2] [stall 1] [error 4] [status 503] [long 9]'),
    ).toEqual({
      long: 500,
      chunks: 3,
      delay: 7,
      cut: 2,
      stall: 1,
      error: 4,
      status: 503,
    });
    expect(parseDirectives('[long] [chunks -1] [nope 3] plain')).toEqual({});
  });

  it('echoes, or makes a long reply', () => {
    expect(replyText('héllo 🚀')).toBe('You said: héllo 🚀');
    expect(replyText('x [long 1234]')).toHaveLength(1234);
  });
});

describe('longMarkdown', () => {
  it('is exactly N characters, deterministic, with balanced fences and no cut surrogate pair', () => {
    for (let n = 0; n <= 1200; n++) {
      const s = longMarkdown(n);
      expect(s.length).toBe(n);
      expect(loneSurrogate.test(s)).toBe(false);
      expect((s.match(/^```/gm) ?? []).length % 2).toBe(0);
      expect(s).toBe(s.trim());
    }
    expect(longMarkdown(5000)).toBe(longMarkdown(5000));
  });

  it('holds paragraphs, a bullet list, ts code blocks and multi-byte text from 400 characters on', () => {
    fc.assert(
      fc.property(fc.integer({ min: 400, max: 30_000 }), (n) => {
        const s = longMarkdown(n);
        expect(s).toHaveLength(n);
        expect(s).toMatch(/```ts\n/);
        expect(s).toMatch(/^- \*\*/m);
        expect(s.split('\n\n').filter((p) => /^[A-Z][^\n]*\.$/.test(p)).length).toBeGreaterThanOrEqual(1);
        expect(s).toMatch(/é/);
        expect(s).toMatch(/🚀/);
        expect((s.match(/^```/gm) ?? []).length % 2).toBe(0);
      }),
      { numRuns: 200 },
    );
  });

  it('makes code blocks large enough to force splits inside fences (over 2,000 characters)', () => {
    const blocks = longMarkdown(12_000)
      .split('```ts\n')
      .slice(1)
      .map((b) => b.indexOf('\n```'));
    expect(Math.max(...blocks)).toBeGreaterThan(2000);
    expect(Math.max(...blocks)).toBeLessThanOrEqual(2500);
  });
});

describe('splitting', () => {
  it('splitText keeps surrogate pairs whole and joins back to the text', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.option(fc.integer({ min: 1, max: 50 })),
        (text, pieces) => {
          const parts = splitText(text, pieces ?? undefined);
          expect(parts.join('')).toBe(text);
          for (const p of parts) expect(loneSurrogate.test(p)).toBe(false);
          if (pieces && text.length > 0) expect(parts.length).toBe(Math.min(pieces, Array.from(text).length));
        },
      ),
    );
    expect(splitText('You said: hi [chunks 2]', 2)).toEqual(['You said: h', 'i [chunks 2]']);
    expect(splitText('0123456789abcdefg')).toEqual(['01234567', '89abcdef', 'g']);
    expect(splitText('🚀🚀🚀🚀🚀🚀🚀🚀🚀')).toEqual(['🚀🚀🚀🚀🚀🚀🚀🚀', '🚀']);
    expect(splitText('')).toEqual([]);
  });

  it('splitBytes covers the buffer in ~8-byte pieces', () => {
    const buf = Buffer.from('é🚀é🚀é🚀 and more');
    const parts = splitBytes(buf);
    expect(Buffer.concat(parts).equals(buf)).toBe(true);
    expect(parts).toHaveLength(Math.ceil(buf.length / 8));
    expect(splitBytes(buf, 3)).toHaveLength(3);
  });
});
