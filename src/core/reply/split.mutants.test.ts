import { describe, expect, it } from 'vitest';
import { fenceCloser } from './fences.js';
import { cutAt } from './reply-text.js';
import { fencesBalanced } from './fences.js';
import { splitOnce, splitText } from './split.js';

// The fence rules and the early cut, case by case (mutation testing). Every expected value is
// written out by hand from CommonMark's fence rules: up to three spaces of indent, three or more
// ` or ~, a backtick fence's info string has no backtick, a closing line is the same character at
// least as long with only spaces or tabs after it.

const texts = (parts: { text: string }[]) => parts.map((p) => p.text);

describe('fenceCloser: what closes a code block left open', () => {
  it('closes an open block on a line of its own, with the opening marker', () => {
    expect(fenceCloser('```ts\ncode')).toBe('\n```');
    expect(fenceCloser('```ts\ncode\n')).toBe('```');
    expect(fenceCloser('~~~~ md\nx')).toBe('\n~~~~');
    expect(fenceCloser('   ```\ncode')).toBe('\n```');
  });

  it('has nothing to close without a block, or when the last block is closed', () => {
    expect(fenceCloser('')).toBe('');
    expect(fenceCloser('plain text\n')).toBe('');
    expect(fenceCloser('```\na\n```')).toBe('');
    expect(fenceCloser('```\na\n`````')).toBe('');
    expect(fenceCloser('```\na\n```  \t')).toBe('');
  });

  it('a line that is not a closing line leaves the block open', () => {
    expect(fenceCloser('````\na\n```')).toBe('\n````');
    expect(fenceCloser('```\na\n~~~')).toBe('\n```');
    expect(fenceCloser('```\na\n``` x')).toBe('\n```');
  });

  it('a line that is not an opening line opens nothing', () => {
    expect(fenceCloser('```a`b\ncode')).toBe('');
    expect(fenceCloser('    ```\ncode')).toBe('');
    expect(fenceCloser('``\ncode')).toBe('');
    expect(fenceCloser('~~~a`b\ncode')).toBe('\n~~~');
  });

  it('looks at every line: a block opened after a closed one', () => {
    expect(fenceCloser('```\na\n```\ntext\n~~~\nb')).toBe('\n~~~');
  });
});

describe('fencesBalanced', () => {
  it('is true without blocks or with every block closed, false with one left open', () => {
    expect(fencesBalanced('')).toBe(true);
    expect(fencesBalanced('a ``` b')).toBe(true);
    expect(fencesBalanced('```\na\n```')).toBe(true);
    expect(fencesBalanced('```\na')).toBe(false);
    expect(fencesBalanced('```\na\n```\n```py\n')).toBe(false);
  });
});

describe('cutAt: a message finished early', () => {
  it('cuts plain text exactly where asked', () => {
    expect(cutAt('abc def', 4)).toEqual({ consumed: 4, head: 'abc ', close: '', reopen: '' });
  });

  it('cuts before a line that may be a fence line still arriving, when text stays before it', () => {
    expect(cutAt('intro\n``', 8)).toEqual({ consumed: 6, head: 'intro\n', close: '', reopen: '' });
    expect(cutAt('intro\n   ~~', 11)).toEqual({ consumed: 6, head: 'intro\n', close: '', reopen: '' });
    // Four spaces of indent: not a fence line.
    expect(cutAt('intro\n    ~~', 12)).toEqual({ consumed: 12, head: 'intro\n    ~~', close: '', reopen: '' });
    // Nothing but whitespace before it: cut where asked.
    expect(cutAt('  \n``', 5)).toEqual({ consumed: 5, head: '  \n``', close: '', reopen: '' });
  });

  it('closes an open code block at the cut and reopens it with its info string', () => {
    expect(cutAt('```py\nx = 1', 11)).toEqual({
      consumed: 11,
      head: '```py\nx = 1\n```',
      close: '\n```',
      reopen: '```py\n',
    });
    expect(cutAt('```py\nx = 1\ny = 2', 12)).toEqual({
      consumed: 12,
      head: '```py\nx = 1\n```',
      close: '```',
      reopen: '```py\n',
    });
    expect(cutAt('~~~~ md\nline', 12)).toEqual({
      consumed: 12,
      head: '~~~~ md\nline\n~~~~',
      close: '\n~~~~',
      reopen: '~~~~ md\n',
    });
  });

  it('adds nothing after a closed block', () => {
    expect(cutAt('```\na\n```\nbb', 12)).toEqual({ consumed: 12, head: '```\na\n```\nbb', close: '', reopen: '' });
  });

  it('does not cut back past minCut (a reopened fence line alone is no message)', () => {
    expect(cutAt('```ts\n``', 8, 6)).toEqual({
      consumed: 8,
      head: '```ts\n``\n```',
      close: '\n```',
      reopen: '```ts\n',
    });
  });
});

describe('splitOnce: bounds', () => {
  it('leaves a text of exactly the limit alone and refuses a limit below 1', () => {
    expect(splitOnce('abc', 3)).toBeUndefined();
    expect(() => splitOnce('ab', 0)).toThrow(new RangeError('max must be at least 1'));
    expect(splitOnce('ab', 1)).toEqual({ consumed: 1, head: 'a', close: '', reopen: '' });
  });

  it('never cuts a pair at the ends of the surrogate ranges (U+10000 is D800 DC00, U+10FFFF is DBFF DFFF)', () => {
    expect(splitOnce('\u{10000}\u{10000}x', 3)).toEqual({ consumed: 2, head: '\u{10000}', close: '', reopen: '' });
    expect(splitOnce('\u{10FFFF}\u{10FFFF}x', 3)).toEqual({ consumed: 2, head: '\u{10FFFF}', close: '', reopen: '' });
  });
});

// A cut never falls inside a Markdown link `[label](target)`: no `]` or line end in the label, no
// `)` or line end in the target. Each text below has one space or line break that a cut would take
// if it were not inside a link, and an earlier space it falls back to when it is.
describe('splitOnce: Markdown links', () => {
  it('avoids a link: the cut falls before it', () => {
    // The link is 5..13; the cut after the space at 10 would be inside it: back to the space before it.
    expect(splitOnce('aaaa [b](c d)ee', 12)?.head).toBe('aaaa ');
    // No boundary: a hard cut, before a link that starts one character before the limit.
    expect(splitOnce('aaaaaaaaaaa[c](e) f', 12)?.head).toBe('aaaaaaaaaaa');
  });

  it('may cut right before a link or right after it', () => {
    // The link is 2..8 and no boundary is near: the hard cut at 8 is right after its `)`.
    expect(splitOnce('xx[a](b)yyyyy', 8)?.head).toBe('xx[a](b)');
    // The link is 2..11, past the limit: the hard cut falls right before its `[`.
    expect(splitOnce('xx[aaaa](b)', 6)?.head).toBe('xx');
  });

  it('a bracket pair without a target is no link', () => {
    expect(splitOnce('aaaa [bb cc] dd', 10)?.head).toBe('aaaa [bb ');
    expect(splitOnce('aaaa [bb cc]dd', 10)?.head).toBe('aaaa [bb ');
  });

  it('a target without its closing parenthesis is no link', () => {
    expect(splitOnce('aaaa [b](c d ee', 12)?.head).toBe('aaaa [b](c ');
  });

  it('a label or target broken by a line is no link', () => {
    expect(splitOnce('aaaa [b\nc](d) eeee', 8)?.head).toBe('aaaa [b\n');
    expect(splitOnce('aaaa [b](c\nd) eeee', 11)?.head).toBe('aaaa [b](c\n');
    // The space at 10 lies between `(` and the line break: no link holds it.
    expect(splitOnce('aaaa [b](c d\ne) ff', 12)?.head).toBe('aaaa [b](c ');
  });

  it('sees every link of a line, and cuts between two of them', () => {
    // [a](b) is 2..8, [c](d e) is 9..17: the space at 8 is between them, the one at 14 inside the second.
    expect(splitOnce('x [a](b) [c](d e) f', 15)?.head).toBe('x [a](b) ');
    // After a bracket that is no link (the `]` at 4 is not followed by `(`), a link still counts.
    expect(splitOnce('x [a] [c](d e) f', 12)?.head).toBe('x [a] ');
  });

  it('a link ends at the first `)`: a bracket inside its target starts nothing', () => {
    // The link is [a](b[c) (2..10); `](d e)` after it is plain text, so the space at 13 is free.
    expect(splitOnce('p [a](b[c)](d e)ff', 14)?.head).toBe('p [a](b[c)](d ');
  });

  it('a link whose `)` lies beyond the lookahead (limit + 2048) counts as none', () => {
    // `)` at 12 + 2048: past what a cut looks at, so the space inside the target at 11 is free.
    const text = `aaaa [b](c ${'x'.repeat(2049)})`;
    expect(text.indexOf(')')).toBe(12 + 2048);
    expect(splitOnce(text, 12)?.head).toBe('aaaa [b](c ');
    // One character earlier, it is a link and the cut falls before it.
    const seen = `aaaa [b](c ${'x'.repeat(2048)})`;
    expect(splitOnce(seen, 12)?.head).toBe('aaaa ');
  });
});

// Where a cut may fall around a fence's lines, and the bounds of a cut, at their exact edges.
describe('splitOnce: edges of the cut guards', () => {
  it('may cut right after a closing fence line', () => {
    // The block is 0..12 (closing line 8..12); the line break ending at 12 is in the last tenth.
    expect(splitOnce('```\nb c\n```\nzz zz', 13)?.head).toBe('```\nb c\n```\n');
  });

  it('never cuts right after an opening fence line (that part would hold an empty block)', () => {
    // The line break at 20 ends the opening line: the cut falls at the one before it.
    expect(splitOnce(`${'a'.repeat(15)}\n\`\`\`\n${'b'.repeat(20)}`, 24)?.head).toBe(`${'a'.repeat(15)}\n`);
  });

  it('reopens a fence whose added lines are exactly half a part, and fills the part exactly', () => {
    // close "```" + reopen "```\n" = 7 of 14; the cut at 11 plus "```" is 14 characters.
    expect(splitOnce(`\`\`\`\nbbbbbb\n${'b'.repeat(12)}`, 14)).toEqual({
      consumed: 11,
      head: '```\nbbbbbb\n```',
      close: '```',
      reopen: '```\n',
    });
  });

  it('a boundary exactly at 90 % of the limit is not in the last tenth', () => {
    // The space ends at 9 of 10: the paragraph break (5, from 30 % on) wins.
    expect(splitOnce('aaa\n\nbbb cccccc', 10)?.head).toBe('aaa\n\n');
  });

  it('takes a boundary that ends exactly at the limit', () => {
    expect(splitOnce('aaaa bbbb cccc', 10)?.head).toBe('aaaa bbbb ');
  });

  it('cuts right before a note that starts exactly at the limit', () => {
    expect(splitOnce('aaaa bbbb\n\nnote', 9, 0, 9)?.head).toBe('aaaa bbbb');
  });

  it('with nothing allowed between minCut and maxCut, the last resort cuts at the limit', () => {
    // The cut must take more than 3 characters and no more than 3: none is allowed.
    expect(splitOnce('abcdefgh', 5, 3, 3)).toEqual({ consumed: 5, head: 'abcde', close: '', reopen: '' });
  });

  it('the last resort (a link longer than a part) still never cuts a surrogate pair', () => {
    // The link covers 0..9; the limit 4 falls between the two halves of the second emoji.
    expect(splitOnce('[😀😀](x)', 4)).toEqual({ consumed: 3, head: '[😀', close: '', reopen: '' });
  });
});

describe('cutAt: edges', () => {
  it('a cut right after an opening line closes the (empty) block and reopens it', () => {
    expect(cutAt('```py\nx', 6)).toEqual({ consumed: 6, head: '```py\n```', close: '```', reopen: '```py\n' });
  });

  it('a cut at the end of a line that may be a fence line moves before that line', () => {
    expect(cutAt('intro\n``\nx', 8)).toEqual({ consumed: 6, head: 'intro\n', close: '', reopen: '' });
  });

  it('only text after minCut counts as text left before the moved cut', () => {
    // After minCut (6) there is only a blank line before `` : the cut stays where asked.
    expect(cutAt('```ts\n\n``', 9, 6)).toEqual({
      consumed: 9,
      head: '```ts\n\n``\n```',
      close: '\n```',
      reopen: '```ts\n',
    });
  });
});

describe('splitOnce: more edges', () => {
  it('a sentence ends at . ! or ? (closers allowed), and takes all the spaces after it', () => {
    // No space in the last tenth: from 30 % on, the sentence end at 5 beats the later space at 9.
    expect(splitOnce('One. two threeeeeeee', 16)?.head).toBe('One. ');
    expect(splitOnce('One.  two threeeeee', 16)?.head).toBe('One.  ');
  });

  it('a link at the start of a line, or with a `)` in its label, is a link', () => {
    // Link 5..13 right after a line break: the cut at the line break, not at the space inside it.
    expect(splitOnce('aaaa\n[b](c d) ee', 12)?.head).toBe('aaaa\n');
    // Link 2..12, its label `a)b`: the space at 9 is inside it.
    expect(splitOnce('x [a)b](c d) ee', 11)?.head).toBe('x ');
    // A line break between `]` and `(` makes no link.
    expect(splitOnce('aaaa [b\n(c d) ee', 12)?.head).toBe('aaaa [b\n(c ');
  });

  it('a hard cut stays off a link up to its `)` included', () => {
    expect(splitOnce('xx[a](bc)yy', 8)?.head).toBe('xx');
  });

  it('a link longer than a part, from the first character, is cut at the limit (the last resort)', () => {
    expect(splitOnce('[a](b c) dd', 7)).toEqual({ consumed: 7, head: '[a](b c', close: '', reopen: '' });
  });

  it('never cuts on an opening fence line, even at a space in its info string', () => {
    expect(splitOnce(`\`\`\`py x\n${'b'.repeat(30)}`, 30)).toEqual({
      consumed: 26,
      head: `\`\`\`py x\n${'b'.repeat(18)}\n\`\`\``,
      close: '\n```',
      reopen: '```py x\n',
    });
  });

  it('never cuts on a closing fence line: the cut falls before it', () => {
    const text = `\`\`\`\n${'b'.repeat(16)}\n\`\`\`\`\`\ncc`;
    expect(texts(splitText(text, 24))).toEqual([`\`\`\`\n${'b'.repeat(16)}\n\`\`\``, '```\n\n`````\ncc']);
  });

  it('a code block whose opening line is too long to repeat is moved whole, not reopened', () => {
    // Reopen "```abcdefghij\n" (14) + close (4) is 18 of 30, over half a part.
    const text = `intro\n\`\`\`abcdefghij\nbbbb bbbb bbbb bbbb bbbb`;
    expect(splitOnce(text, 30)?.head).toBe('intro\n');
  });

  it('sees the whole line holding the limit: "``` x" there is code, not a closing line', () => {
    // The line at 17..27 crosses the limit 20; cut to 20 it would read as a closing line.
    const code = `\`\`\`\n${'b'.repeat(12)}\n`;
    const want = { consumed: 17, head: `${code}\`\`\``, close: '```', reopen: '```\n' };
    expect(splitOnce(`${code}\`\`\`      x\nmore`, 20)).toEqual(want);
    expect(splitOnce(`${code}\`\`\`      x`, 20)).toEqual(want);
  });

  it('splitText hands each cut the full lookahead: a link whose `)` is 2047 past the limit is seen', () => {
    const text = `aaaa [b](c ${'x'.repeat(2048)})`;
    expect(splitText(text, 12)[0]?.text).toBe('aaaa ');
  });
});

describe('cutAt: a block closed after the cut', () => {
  it('is still open at the cut: closed there and reopened', () => {
    expect(cutAt('```py\nx = 1\ny = 2\n```', 12)).toEqual({
      consumed: 12,
      head: '```py\nx = 1\n```',
      close: '```',
      reopen: '```py\n',
    });
  });
});
