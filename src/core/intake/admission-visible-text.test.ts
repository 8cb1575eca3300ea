import { describe, expect, it } from 'vitest';
import { hasVisibleText } from './admission.js';

describe('hasVisibleText', () => {
  it('is false for nothing, whitespace and invisible characters only', () => {
    for (const text of [
      '',
      '   \n\t',
      '\u00a0\u3000',
      '\u200b',
      '\u200c\u200d',
      '\u2060\ufeff',
      ' \u200b \u200e\u200f ',
      '\u2800',
      '\u3164\u115f',
      '\u00ad',
      '\ufe0f',
    ]) {
      expect(hasVisibleText(text), JSON.stringify(text)).toBe(false);
    }
  });

  it('is true as soon as one visible character is there', () => {
    for (const text of ['a', ' ?', '\u200bhi\u200b', '日本', '👍', '\u200d👍', '.', '<@123>']) {
      expect(hasVisibleText(text), JSON.stringify(text)).toBe(true);
    }
  });
});
