import { describe, expect, it } from 'vitest';
import { cutAt, fenceCloser, fencesBalanced, splitOnce } from './split.js';

// The fence rules and the early cut, case by case (mutation testing). Every expected value is
// written out by hand from CommonMark's fence rules: up to three spaces of indent, three or more
// ` or ~, a backtick fence's info string has no backtick, a closing line is the same character at
// least as long with only spaces or tabs after it.

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
    expect(() => splitOnce('ab', 0)).toThrow(RangeError);
    expect(splitOnce('ab', 1)).toEqual({ consumed: 1, head: 'a', close: '', reopen: '' });
  });

  it('never cuts a pair at the ends of the surrogate ranges (U+10000 is D800 DC00, U+10FFFF is DBFF DFFF)', () => {
    expect(splitOnce('\u{10000}\u{10000}x', 3)).toEqual({ consumed: 2, head: '\u{10000}', close: '', reopen: '' });
    expect(splitOnce('\u{10FFFF}\u{10FFFF}x', 3)).toEqual({ consumed: 2, head: '\u{10FFFF}', close: '', reopen: '' });
  });
});
