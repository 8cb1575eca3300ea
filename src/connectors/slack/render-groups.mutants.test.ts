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

// Lines that pin each bound exactly. U is a line of 257 delimiters (the marker's two and 255
// more): shown as written, so its `*a*` stays literal; one delimiter fewer and the library
// converts it (`_a_` between zero-width spaces).
const bangs = (n: number) => '! '.repeat(n).trimEnd();
const U = `x *a* ${bangs(255)}`;

describe('renderMrkdwn: each delimiter counts toward the 256 bound', () => {
  // What each delimiter looks like once neutralised, written out.
  const shown: Record<string, string> = {
    '*': '*',
    _: '_',
    '~': '~',
    '`': '`',
    '[': '[',
    ']': ']',
    '<': '&lt;',
    '>': '&gt;',
    '&': '&amp;',
    '\\': '\\',
    '!': '!',
  };
  for (const [c, out] of Object.entries(shown)) {
    it(`${c}: a line with 255 of them and a marked word is shown as written`, () => {
      const marker = c === '*' ? '_a_' : '*a*';
      expect(renderMrkdwn(`x ${marker} ${`${c} `.repeat(255).trimEnd()}`)).toBe(
        `x ${marker} ${`${out} `.repeat(255).trimEnd()}`,
      );
    });
  }

  it('256 delimiters on one line are still converted', () => {
    expect(renderMrkdwn(`x *a* ${bangs(254)}`)).toBe(`x ${Z}_a_${Z} ${bangs(254)}`);
  });
});

describe('renderMrkdwn: the 4,000-character bound on a line', () => {
  const line = (n: number) => `x *a* ${'y'.repeat(n - 6)}`;

  it('a line of 3,999 characters and its line break (4,000) is converted, one more is not', () => {
    expect(renderMrkdwn(`${line(3999)}\nend`)).toBe(`x ${Z}_a_${Z} ${'y'.repeat(3993)}\nend`);
    expect(renderMrkdwn(`${line(4000)}\nend`)).toBe(`x *a* ${'y'.repeat(3994)}\nend`);
  });

  it('a last line (no line break) of 4,000 characters is converted, 4,001 is not', () => {
    expect(renderMrkdwn(`end\n${line(4000)}`)).toBe(`end\nx ${Z}_a_${Z} ${'y'.repeat(3994)}`);
    expect(renderMrkdwn(`end\n${line(4001)}`)).toBe(`end\nx *a* ${'y'.repeat(3995)}`);
  });

  it('a last line beyond the bound is shown as written, the line before converted', () => {
    expect(renderMrkdwn(`top *t*\n${U}`)).toBe(`top ${Z}_t_${Z}\n${U}`);
  });

  it('a line shown as written loses its indentation and line break, nothing else', () => {
    expect(renderMrkdwn(`top\n  ${U}\nend`)).toBe(`top\n${U}\nend`);
  });
});

describe('renderMrkdwn: lines within the bounds share one library call up to the bounds', () => {
  // Emphasis opened on one line and closed on the next converts only when both lines go to the
  // library together. A first line of 3,000 characters fills one group, so the pair starts a new one.
  const first = `*f* ${'z'.repeat(2995)}`;
  const firstOut = `${Z}_f_${Z} ${'z'.repeat(2995)}`;

  it('two lines of 4,000 characters in all are one group; 4,001 are two', () => {
    const pair = (n: number) => `*s ${'y'.repeat(2000)}\n${'y'.repeat(n - 2007)} e*`;
    expect(renderMrkdwn(`${first}\n${pair(4000)}`)).toBe(
      `${firstOut}\n${Z}_s ${'y'.repeat(2000)}\n${'y'.repeat(1993)} e_${Z}`,
    );
    expect(renderMrkdwn(`${first}\n${pair(4001)}`)).toBe(`${firstOut}\n*s ${'y'.repeat(2000)}\n${'y'.repeat(1994)} e*`);
  });

  it('two lines of 256 delimiters in all are one group, 257 are two; the count restarts at each group', () => {
    // The first line (200 delimiters) and the pair (over 256 with it) are separate groups.
    const top = `*t* ${bangs(198)}`;
    const topOut = `${Z}_t_${Z} ${bangs(198)}`;
    const pair = (n: number) => `*s ${bangs(127)}\n${bangs(n - 129)} e*`;
    expect(renderMrkdwn(`${top}\n${pair(256)}`)).toBe(`${topOut}\n${Z}_s ${bangs(127)}\n${bangs(127)} e_${Z}`);
    expect(renderMrkdwn(`${top}\n${pair(257)}`)).toBe(`${topOut}\n*s ${bangs(127)}\n${bangs(128)} e*`);
  });
});

describe('renderMrkdwn: line and paragraph breaks around a line shown as written', () => {
  // A loose list stays one block, so the breaks between its items are the renderer's own.
  it('a blank line (empty, or spaces, tabs, CR) before it is a paragraph break', () => {
    for (const blank of ['', ' ', '\t', '\r']) {
      expect(renderMrkdwn(`- *a*\n${blank}\n- ${U}`), JSON.stringify(blank)).toBe(`•   ${Z}_a_${Z}\n\n- ${U}`);
    }
  });

  it('a blank line (empty, or spaces, tabs, CR) after it is a paragraph break', () => {
    for (const blank of ['', ' ', '\t', '\r']) {
      expect(renderMrkdwn(`- ${U}\n${blank}\n- *b*`), JSON.stringify(blank)).toBe(`- ${U}\n\n•   ${Z}_b_${Z}`);
    }
    // The blank line between them is a group of its own: nothing for the library.
    const work = newRenderWork();
    expect(createMrkdwnRenderer({ work })(`- ${U}\n\n- ${U}`)).toBe(`- ${U}\n\n- ${U}`);
    expect(work.libraryCalls).toBe(0);
  });

  it('without a blank line, a line break only, however many lines the neighbours have', () => {
    expect(renderMrkdwn(`*a*\nb\n${U}\nc\nd`)).toBe(`${Z}_a_${Z}\nb\n${U}\nc\nd`);
  });
});

describe('createMrkdwnRenderer: what the block cache keeps and evicts', () => {
  it('keeps a block cut into groups, except the last group of the last block (still growing)', () => {
    const work = newRenderWork();
    const render = createMrkdwnRenderer({ work });
    const reply = `*a*\n${U}\n*b*\n${U}\n*c*`;
    const shown = `${Z}_a_${Z}\n${U}\n${Z}_b_${Z}\n${U}\n${Z}_c_${Z}`;
    expect(render(reply)).toBe(shown);
    expect(work.libraryCalls).toBe(3);
    expect(render(reply)).toBe(shown);
    expect(work.libraryCalls).toBe(4); // "*c*" again, "*a*" and "*b*" from the cache
    // Once another block follows, every group of the first one is kept.
    expect(render(`${reply}\n\nnext`)).toBe(`${shown}\n\nnext`);
    expect(work.libraryCalls).toBe(6);
    expect(render(`${reply}\n\nnext`)).toBe(`${shown}\n\nnext`);
    expect(work.libraryCalls).toBe(7);
  });

  it('evicts the least recently used block once keys and values pass cacheChars (exactly at it: kept)', () => {
    const work = newRenderWork();
    // Each of "aaaa", "bbbb", "cccc" costs 8 (a 4-character key and its 4-character rendering).
    const render = createMrkdwnRenderer({ work, cacheChars: 16 });
    expect(render('aaaa\n\nbbbb\n\nz')).toBe('aaaa\n\nbbbb\n\nz');
    expect(work.libraryCalls).toBe(3); // cache: aaaa, bbbb (16)
    expect(render('aaaa\n\nz')).toBe('aaaa\n\nz');
    expect(work.libraryCalls).toBe(4); // a hit makes aaaa the newest: bbbb, aaaa
    expect(render('cccc\n\nz')).toBe('cccc\n\nz');
    expect(work.libraryCalls).toBe(6); // cccc evicts bbbb: aaaa, cccc
    expect(render('aaaa\n\ncccc\n\nz')).toBe('aaaa\n\ncccc\n\nz');
    expect(work.libraryCalls).toBe(7);
    expect(render('bbbb\n\nz')).toBe('bbbb\n\nz');
    expect(work.libraryCalls).toBe(9);
  });

  it('counts the work, computed by hand for a two-paragraph reply', () => {
    const work = newRenderWork();
    expect(createMrkdwnRenderer({ work })('para *one*\n\nlast')).toBe(`para ${Z}_one_${Z}\n\nlast`);
    // scanned: the block pass 2 * 16, each block once (12 + 4), neutralising and trimming 2 * 18.
    expect(work).toEqual({ libraryCalls: 2, libraryChars: 14, libraryMarkupSquared: 4, scanned: 84 });
  });
});
