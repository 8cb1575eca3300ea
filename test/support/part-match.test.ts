import { describe, expect, it } from 'vitest';
import { exactPartsProblems } from './part-match.js';

// The exact comparison of a reply's parts with its text, on written-out cases.

describe('exactPartsProblems', () => {
  const whole = 'ab\n```ts\ncode\n```\ntail';

  it('accepts a code block closed at a cut and reopened with its opening line', () => {
    expect(exactPartsProblems(['ab\n```ts\nco\n```', '```ts\nde\n```\ntail'], whole)).toEqual([]);
  });

  it('reads a closing line at a part’s end as added by the cut when the next part reopens the block', () => {
    // The first part was finished while the real closing line was still to come.
    expect(exactPartsProblems(['ab\n```ts\ncode\n```', '```ts\n```\ntail'], whole)).toEqual([]);
    expect(exactPartsProblems(['ab\n```ts\ncode\n```', 'tail'], whole)).toEqual([]);
  });

  it('fails on a lost or changed character, whitespace inside a part included', () => {
    expect(exactPartsProblems(['ab\n```ts\ncode\n```', 'tai'], whole)).toHaveLength(1);
    expect(exactPartsProblems(['ab\n```ts\ncode\n```tail'], whole)).toHaveLength(1);
    expect(exactPartsProblems(['ab\n```ts\ncode\n```', '```ts\ncode\n```\ntail'], whole)).toHaveLength(1);
    expect(exactPartsProblems(['ab\n```ts\nco\n```', 'de\n```\ntail'], whole)).toHaveLength(1);
  });
});
