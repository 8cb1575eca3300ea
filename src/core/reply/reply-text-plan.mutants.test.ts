import { describe, expect, it } from 'vitest';
import { type PlanInput, planWrite } from './reply-text.js';

// The writer's decision, input by input: when a message is cut, what it shows, when a write is
// final, skipped or not needed (mutation testing). Expected texts are written out by hand.

const base: PlanInput = {
  desired: '',
  carryLength: 0,
  limit: 100,
  noteCut: undefined,
  posted: true,
  messageFinal: false,
  sent: '',
  ending: false,
  needsFinalWrite: false,
  rolloverDue: false,
};
const plan = (p: Partial<PlanInput>) => planWrite({ ...base, ...p });

describe('planWrite: a message over the limit', () => {
  it('cuts at the paragraph break and finishes the message there', () => {
    expect(plan({ desired: 'aaaa\n\nbbbb', limit: 8 })).toEqual({
      kind: 'write',
      text: 'aaaa\n\n',
      final: true,
      next: { consumed: 6, reopen: '' },
    });
  });

  it('a text exactly at the limit is not cut', () => {
    expect(plan({ desired: 'abcd', limit: 4, sent: 'ab' })).toEqual({ kind: 'write', text: 'abcd', final: false });
  });

  it('cuts right before the closing note when all before it fits', () => {
    // Without the note position the cut would fall at the last space ("aaaa bbbb\nnote ").
    expect(plan({ desired: 'aaaa bbbb\nnote text', limit: 15, noteCut: 10 })).toEqual({
      kind: 'write',
      text: 'aaaa bbbb\n',
      final: true,
      next: { consumed: 10, reopen: '' },
    });
    expect(plan({ desired: 'aaaa bbbb\nnote text', limit: 15 })).toEqual({
      kind: 'write',
      text: 'aaaa bbbb\nnote ',
      final: true,
      next: { consumed: 15, reopen: '' },
    });
  });

  it('ignores a note position that would leave the message empty (at the start)', () => {
    expect(plan({ desired: 'xxxxx yyyyy zzzzz', limit: 8, noteCut: 0 })).toEqual({
      kind: 'write',
      text: 'xxxxx ',
      final: true,
      next: { consumed: 6, reopen: '' },
    });
  });

  it('never cuts within the reopened fence line or the whitespace after it', () => {
    // carry "```\n" (4) + body "  abc…": the only boundary is the end of the leading spaces,
    // which would leave a part of fence lines and whitespace; the hard cut keeps the limit with
    // the added closing line ("\n```").
    expect(plan({ desired: '```\n  abcdefghijklmnopqrstuvwxyz', carryLength: 4, limit: 16 })).toEqual({
      kind: 'write',
      text: '```\n  abcdef\n```',
      final: true,
      next: { consumed: 12, reopen: '```\n' },
    });
  });

  it('skips leading whitespace that would be a message of its own before anything is posted', () => {
    expect(plan({ desired: '          ', limit: 4, posted: false })).toEqual({ kind: 'skip', consumed: 4, reopen: '' });
  });

  it('finishes a posted message even when the part is only whitespace', () => {
    expect(plan({ desired: '          ', limit: 4, posted: true })).toEqual({
      kind: 'write',
      text: '    ',
      final: true,
      next: { consumed: 4, reopen: '' },
    });
  });
});

describe('planWrite: the reply ended', () => {
  it('finishes a posted message whose remaining text is only whitespace', () => {
    expect(plan({ ending: true, desired: 'hi ', carryLength: 2, sent: 'hi' })).toEqual({
      kind: 'write',
      text: 'hi ',
      final: true,
    });
  });

  it('is done when a whitespace-only rest was never posted, or its message is already final', () => {
    expect(plan({ ending: true, desired: '  ', posted: false })).toEqual({ kind: 'done' });
    expect(plan({ ending: true, desired: '  ', posted: true, messageFinal: true })).toEqual({ kind: 'done' });
  });

  it('writes the final text when it changed', () => {
    expect(plan({ ending: true, desired: 'hello', sent: 'hell' })).toEqual({
      kind: 'write',
      text: 'hello',
      final: true,
    });
  });

  it('is done when the platform already shows the whole text and no final signal is needed', () => {
    expect(plan({ ending: true, desired: 'hello', sent: 'hello' })).toEqual({ kind: 'done' });
    expect(plan({ ending: true, desired: 'hello', sent: 'hello', messageFinal: true, needsFinalWrite: true })).toEqual({
      kind: 'done',
    });
  });

  it('rewrites the same text once more when the sink needs the final write', () => {
    expect(plan({ ending: true, desired: 'hello', sent: 'hello', needsFinalWrite: true })).toEqual({
      kind: 'write',
      text: 'hello',
      final: true,
    });
  });

  it('writes the final text of a never-posted message', () => {
    expect(plan({ ending: true, desired: 'hello', posted: false })).toEqual({
      kind: 'write',
      text: 'hello',
      final: true,
    });
  });
});

describe('planWrite: a message grown too old', () => {
  it('finishes the message with all its text, closing an open code block for the next one', () => {
    expect(plan({ rolloverDue: true, desired: 'abc\n```ts\ncode', sent: 'abc' })).toEqual({
      kind: 'write',
      text: 'abc\n```ts\ncode\n```',
      final: true,
      next: { consumed: 14, reopen: '```ts\n' },
    });
  });

  it('does not cut back into the reopened fence line it started with', () => {
    // "``" may be a closing line still arriving, but cutting before it would leave only the
    // reopened fence line: the whole text goes, and the block is closed and reopened.
    expect(plan({ rolloverDue: true, desired: '```ts\n``', carryLength: 6 })).toEqual({
      kind: 'write',
      text: '```ts\n``\n```',
      final: true,
      next: { consumed: 8, reopen: '```ts\n' },
    });
  });
});

describe('planWrite: streaming', () => {
  it('writes new text as a non-final edit', () => {
    expect(plan({ desired: 'hello', sent: 'hel' })).toEqual({ kind: 'write', text: 'hello', final: false });
  });

  it('waits when nothing changed', () => {
    expect(plan({ desired: 'hello', sent: 'hello' })).toEqual({ kind: 'wait' });
  });

  it('waits while the message holds only the reopened fence line and whitespace', () => {
    expect(plan({ desired: '```ts\n  ', carryLength: 6, sent: '' })).toEqual({ kind: 'wait' });
    expect(plan({ desired: '   ', sent: '' })).toEqual({ kind: 'wait' });
  });
});
