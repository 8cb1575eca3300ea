import { describe, expect, it } from 'vitest';
import { stripBotMention, threadName } from './events.js';

// The Discord text helpers, rule by rule, with expected values written out (mutation testing).

describe('stripBotMention', () => {
  it('removes every mention of the bot, both forms, and only the bot', () => {
    expect(stripBotMention('<@42> a <@42> b <@!42> c', '42')).toBe('a b c');
    expect(stripBotMention('<@420> <@4> <@&42> <#42>', '42')).toBe('<@420> <@4> <@&42> <#42>');
    expect(stripBotMention('<@!!42> x', '42')).toBe('<@!!42> x');
    // A mention between two words leaves them apart.
    expect(stripBotMention('hi<@42>there', '42')).toBe('hi there');
  });

  it('collapses runs of spaces and tabs to one space, keeps line breaks, trims', () => {
    expect(stripBotMention('a   b', '42')).toBe('a b');
    expect(stripBotMention('a\t\tb', '42')).toBe('a b');
    expect(stripBotMention('a \tb', '42')).toBe('a b');
    expect(stripBotMention('a b', '42')).toBe('a b');
    expect(stripBotMention('a\n\nb', '42')).toBe('a\n\nb');
    expect(stripBotMention('  <@42>\tx  ', '42')).toBe('x');
  });
});

describe('threadName', () => {
  it('flattens whitespace and uses the fallback (cut to 100) for nothing', () => {
    expect(threadName(' a \n\t b ', 'f')).toBe('a b');
    expect(threadName(' \n ', 'fallback')).toBe('fallback');
    expect(threadName('', 'f'.repeat(150))).toBe('f'.repeat(100));
  });

  it('keeps a name of exactly 100 characters, cuts 101 at a word with an ellipsis', () => {
    const hundred = `${'a'.repeat(49)} ${'b'.repeat(50)}`;
    expect(threadName(hundred, 'f')).toBe(hundred);
    expect(threadName(`${hundred}c`, 'f')).toBe(`${'a'.repeat(49)}…`);
  });

  it('cuts at the last space only when it leaves more than 40 characters, else hard at 99', () => {
    const tail = 'b'.repeat(70);
    expect(threadName(`${'a'.repeat(41)} ${tail}`, 'f')).toBe(`${'a'.repeat(41)}…`);
    expect(threadName(`${'a'.repeat(40)} ${tail}`, 'f')).toBe(`${'a'.repeat(40)} ${'b'.repeat(58)}…`);
    expect(threadName('x'.repeat(120), 'f')).toBe(`${'x'.repeat(99)}…`);
  });
});
