import { describe, expect, it } from 'vitest';
import { HIGHLIGHT_JS } from './page-highlight.js';
import { FAVICON_SVG, pageWithToken } from './page-serve.js';
import { pageFile } from './turn-events.js';

// The page's highlighter is browser code kept as text; its scanner needs no DOM, so it runs here
// as the browser runs it. The browser test (test/browser/playground-product.test.ts) shows it in
// a page.

type Tokens = (text: string, lang: string) => [string, string][];
// The page's own script, run as the browser would run it.
const tokens = new Function(`${HIGHLIGHT_JS}; return tokens;`)() as Tokens;
const kinds = (text: string, lang: string) => tokens(text, lang).filter(([k]) => k !== '');

describe('the page highlighter', () => {
  it('never changes the text: the tokens put together are the code', () => {
    for (const [code, lang] of [
      ['const a = "x\\"y"; // c\nlet b = 0x1f + 2.5e3;\n', 'ts'],
      ['def f(x):\n    return x  # done\n"""doc\nstring"""\n', 'python'],
      ['SELECT id, name FROM users -- all\nWHERE id = 1;', 'sql'],
      ['<!-- note --><div class="a">text</div>', 'html'],
      ["it's prose, not a string", 'text'],
      ['unterminated "string\nnext line', ''],
      ['/* open comment', 'c'],
      ['\u0060template ${x}\u0060', 'js'],
    ]) {
      expect(
        tokens(code ?? '', lang ?? '')
          .map(([, t]) => t)
          .join(''),
      ).toBe(code);
    }
  });

  it('names comments, strings, numbers, keywords and called names, by language', () => {
    expect(kinds('const x = 42; // answer\nfoo("s");', 'ts')).toEqual([
      ['k', 'const'],
      ['n', '42'],
      ['c', '// answer'],
      ['f', 'foo'],
      ['s', '"s"'],
    ]);
    expect(kinds('x = 1  # note', 'python')).toEqual([
      ['n', '1'],
      ['c', '# note'],
    ]);
    // '#' is no comment in C-like code, '--' only in SQL-like languages.
    expect(kinds('#include <x>', 'c').some(([k]) => k === 'c')).toBe(false);
    expect(kinds('select a from t -- why', 'sql')).toEqual([
      ['k', 'select'],
      ['k', 'from'],
      ['c', '-- why'],
    ]);
    expect(kinds("don't", 'markdown')).toEqual([]);
  });

  it('is linear on long or hostile input (no backtracking blow-up)', () => {
    const started = Date.now();
    tokens('"'.repeat(20_000) + '/*'.repeat(20_000) + 'a('.repeat(20_000), 'ts');
    // Generous for a busy machine: a catastrophic regex would take minutes.
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('what the page is told, and its files', () => {
  it('says whether the built-in emulator answers; the token stays last before </head>', () => {
    expect(pageWithToken('t0k', { emulator: true })).toMatch(
      /<meta name="playground-upstream" content="emulator">\n<meta name="playground-token" content="t0k">\n<\/head>/,
    );
    expect(pageWithToken('t0k', { emulator: false })).toContain('<meta name="playground-upstream" content="service">');
    expect(pageWithToken('t0k')).toContain('content="service"');
    expect(FAVICON_SVG.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
  });

  it('a file reaches the page as an https link or its bytes as a data URL, else by name only', () => {
    expect(pageFile({ name: 'a.png', mime: 'image/png', url: 'https://x.example/a.png' })).toEqual({
      name: 'a.png',
      mime: 'image/png',
      url: 'https://x.example/a.png',
    });
    expect(pageFile({ name: 'b', url: 'http://x.example/b' })).toEqual({ name: 'b' });
    expect(pageFile({ name: 'c.txt', mime: 'text/plain', data: new TextEncoder().encode('hi') })).toMatchObject({
      dataUrl: 'data:text/plain;base64,aGk=',
    });
    // A type that is not a plain MIME type cannot reach the data URL's header.
    expect(pageFile({ name: 'd', mime: 'text/html;x=<b>', data: new Uint8Array([1]) }).dataUrl).toBe(
      'data:application/octet-stream;base64,AQ==',
    );
    expect(pageFile({ name: 'big.zip', size: 9e9 })).toEqual({ name: 'big.zip', size: 9e9 });
  });
});
