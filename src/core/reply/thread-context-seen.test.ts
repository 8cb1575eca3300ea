import { describe, expect, it } from 'vitest';
import { compareIds, SeenMessages } from './thread-context.js';
import { cutText } from './upstream-message.js';

describe('SeenMessages', () => {
  const limits = { perPlace: 3, places: 2, ttlMs: 1000, maxChars: 10 };

  it('gives a place’s messages before an id, newest first, whatever order they came in', () => {
    const seen = new SeenMessages<string>(() => 0, limits);
    seen.add('p', '1700000000.000300', 'c');
    seen.add('p', '1700000000.000100', 'a');
    seen.add('p', '1700000000.000200', 'b');
    expect(seen.before('p', '1700000000.000300', 10)).toEqual(['b', 'a']);
    expect(seen.before('p', undefined, 2)).toEqual(['c', 'b']);
    seen.update('p', '1700000000.000200', () => 'B');
    seen.remove('p', '1700000000.000100');
    expect(seen.before('p', undefined, 10)).toEqual(['c', 'B']);
  });

  it('is bounded: messages per place, places, and age', () => {
    let now = 0;
    const seen = new SeenMessages<string>(() => now, limits);
    for (let i = 1; i <= 5; i++) seen.add('p', String(i), `m${i}`);
    expect(seen.before('p', undefined, 10)).toEqual(['m5', 'm4', 'm3']);
    seen.add('q', '1', 'q1');
    seen.add('r', '1', 'r1');
    expect(seen.size).toBe(2);
    expect(seen.before('p', undefined, 10)).toEqual([]);
    now = 1001;
    expect(seen.before('q', undefined, 10)).toEqual([]);
    seen.add('s', '1', 's1');
    expect(seen.size).toBe(1);
  });
});

describe('compareIds and cutText', () => {
  it('orders Slack timestamps and Discord snowflakes as numbers', () => {
    expect(compareIds('999.9', '1000.0')).toBeLessThan(0);
    expect(compareIds('1700000000.0001', '1700000000.000099')).toBeGreaterThan(0);
    expect(compareIds('1700000000.5', '1700000000.500000')).toBe(0);
    expect(compareIds('1234567890123456789', '1234567890123456790')).toBeLessThan(0);
  });

  it('cuts a long text with an ellipsis', () => {
    expect(cutText('abcdef', 4)).toBe('abc…');
    expect(cutText('abc', 4)).toBe('abc');
  });
});
