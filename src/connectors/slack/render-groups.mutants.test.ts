import { describe, expect, it } from 'vitest';
import { createMrkdwnRenderer, newRenderWork, renderMrkdwn } from './render.js';

// Lines beyond the Markdown library's bounds (over 4,000 characters, or over 256 delimiters) are
// shown as written, apart from the lines around them, which are still converted; the line or
// paragraph break between them is kept (mutation testing). Expected texts are written out: the
// library wraps emphasis in zero-width spaces (Z) so that Slack sees it next to other text.

const Z = '\u200B';
const long = 'word '.repeat(900).trim(); // 4,499 characters, no markup

describe('renderMrkdwn: lines beyond the library bounds', () => {
  it('a line over 4,000 characters is shown as written between converted lines, line breaks kept', () => {
    expect(renderMrkdwn(`*intro*\n${long}\nnext *b*`)).toBe(`${Z}_intro_${Z}\n${long}\nnext ${Z}_b_${Z}`);
  });

  it('keeps the paragraph breaks around such a line', () => {
    expect(renderMrkdwn(`*intro*\n\n${long}\n\nnext *b*`)).toBe(`${Z}_intro_${Z}\n\n${long}\n\nnext ${Z}_b_${Z}`);
  });

  it('a blank line of spaces, tabs or CR still separates paragraphs; the first and last line may be long', () => {
    expect(renderMrkdwn(`*intro*\n \r\n${long}\n  \nnext`)).toBe(`${Z}_intro_${Z}\n\n${long}\n\nnext`);
    expect(renderMrkdwn(`${long}\n\nnext *b*`)).toBe(`${long}\n\nnext ${Z}_b_${Z}`);
    expect(renderMrkdwn(`${long}\n*b*`)).toBe(`${long}\n${Z}_b_${Z}`);
    expect(renderMrkdwn(`*a*\n${long}\n${long}\n*b*`)).toBe(`${Z}_a_${Z}\n${long}\n${long}\n${Z}_b_${Z}`);
  });

  it('a line of more than 256 delimiters is shown as written (trimmed), the lines around converted', () => {
    const stars = '*'.repeat(300);
    expect(renderMrkdwn(`a *x*\n${stars}\nb *y*`)).toBe(`a ${Z}_x_${Z}\n${stars}\nb ${Z}_y_${Z}`);
    const marks = '_ '.repeat(300);
    expect(renderMrkdwn(`a *x*\n\n${marks}\n\nb *y*`)).toBe(`a ${Z}_x_${Z}\n\n${marks.trim()}\n\nb ${Z}_y_${Z}`);
  });

  it('a line of exactly 256 delimiters is converted with its paragraph (one library call), 257 apart', () => {
    const at = newRenderWork();
    createMrkdwnRenderer({ work: at })(`a\n${'_ '.repeat(256).trim()}\nb`);
    expect(at.libraryCalls).toBe(1);
    // Over the bound: "a" and "b" are converted alone, the line between is not a library call.
    const over = newRenderWork();
    createMrkdwnRenderer({ work: over })(`a\n${'_ '.repeat(257).trim()}\nb`);
    expect(over.libraryCalls).toBe(2);
  });
});

describe('createMrkdwnRenderer: the block cache', () => {
  it('renders a finished paragraph once, and again once it was evicted', () => {
    const work = newRenderWork();
    const render = createMrkdwnRenderer({ work });
    expect(render('para *one*\n\nlast')).toBe(`para ${Z}_one_${Z}\n\nlast`);
    expect(work).toMatchObject({ libraryCalls: 2, libraryChars: 14 });
    expect(render('para *one*\n\nlast two')).toBe(`para ${Z}_one_${Z}\n\nlast two`);
    // "para *one*" came from the cache; the last paragraph (still growing) was not kept.
    expect(work).toMatchObject({ libraryCalls: 3, libraryChars: 22 });

    const none = newRenderWork();
    const noCache = createMrkdwnRenderer({ work: none, cacheChars: 0 });
    noCache('para *one*\n\nlast');
    noCache('para *one*\n\nlast two');
    expect(none).toMatchObject({ libraryCalls: 4, libraryChars: 32 });
  });
});
