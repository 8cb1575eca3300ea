import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderMarkdownText, renderMrkdwn, stablePrefixEnd } from './render.js';

const controls = [
  '<!channel>',
  '<!here>',
  '<!everyone>',
  '<!subteam^S123|@team>',
  '<@U123>',
  '<#C123|general>',
  '@channel',
  '@here',
  '@everyone',
  // Case variants: Slack matches broadcasts in any case.
  '<!CHANNEL>',
  '<!Here>',
  '<!EVERYONE>',
  '@EveryOne',
  '@Channel',
  '@HERE',
  '<@u123>',
  '<',
  '>',
  '&',
  '&amp;',
  '&lt;',
  '<http://x.test|',
  '[a](http://e.test)',
  '`',
  '```',
  '\n',
  ' ',
  '**',
  '_',
  '[',
  ']',
  '(',
  ')',
  '|',
  '<!',
  '<@',
  '<#',
  '!',
];
const piece = fc.oneof(fc.constantFrom(...controls), fc.string({ maxLength: 6 }));
const text = fc.array(piece, { maxLength: 30 }).map((a) => a.join(''));

/**
 * The test's own oracle for `markdown_text` (not the production hasControlSequence): a `<`
 * directly followed by `!`, `@` or `#`, or a broadcast word in any case.
 */
function markdownControl(s: string): boolean {
  return /<[!@#]/.test(s) || /@(channel|here|everyone)(?![\p{L}\p{N}_])/iu.test(s);
}

/** Raw `<...>` sequences that are not a web/mail link. */
function rawControl(mrkdwn: string): boolean {
  const stripped = mrkdwn.replace(/<(?:https?:\/\/|mailto:)[^\s<>|]+(?:\|[^<>]*)?>/g, '');
  return /[<>]/.test(stripped) || /&(?!(amp|lt|gt);)/.test(stripped) || /@(channel|here|everyone)\b/i.test(stripped);
}

describe('renderMrkdwn', () => {
  it('converts Markdown and escapes control sequences', () => {
    expect(renderMrkdwn('**hi** <!channel> & <@U1> a < b')).toBe(
      '\u200B*hi*\u200B &lt;!channel&gt; &amp; &lt;@U1&gt; a &lt; b',
    );
    expect(renderMrkdwn('see [docs](http://x.test/?a=1&b=2)')).toBe('see <http://x.test/?a=1&amp;b=2|docs>');
    expect(renderMrkdwn('hey @channel and @here')).not.toMatch(/@(channel|here)\b/);
  });

  it('keeps code fences balanced', () => {
    const out = renderMrkdwn('text\n\n```ts\nconst a = 1 < 2;\n```\nafter');
    expect(out).toBe('text\n\n```\nconst a = 1 &lt; 2;\n```\n\nafter');
  });

  it('breaks broadcasts in any case', () => {
    expect(renderMrkdwn('<!CHANNEL> <!Here> @EveryOne @Channel')).toBe(
      '&lt;!CHANNEL&gt; &lt;!Here&gt; @\u200BEveryOne @\u200BChannel',
    );
  });

  it('renders Markdown blocks as Slack shows them', () => {
    expect(renderMrkdwn('# Title\n\n- one\n- **two**\n\n1. a\n\n1. b\n\n> quoted _it_')).toBe(
      '*Title*\n\n•   one\n•   \u200B*two*\u200B\n\n1.  a\n\n2.  b\n\n&gt; quoted \u200B_it_\u200B',
    );
  });

  it('shows a pathological line as written, neutralised', () => {
    const line = `${'*a'.repeat(19_500)} <!here> &`;
    expect(renderMrkdwn(line)).toBe(`${'*a'.repeat(19_500)} &lt;!here&gt; &amp;`);
    expect(renderMrkdwn(`ok **b**\n\n${'_a'.repeat(300)}\n\ntail`)).toBe(
      `ok \u200B*b*\u200B\n\n${'_a'.repeat(300)}\n\ntail`,
    );
  });

  it('trims trailing whitespace without a quadratic pass', () => {
    expect(renderMrkdwn(`${' '.repeat(40_000)}x${' \n'.repeat(10)}`)).toBe('x');
  });

  it('never lets a raw control sequence through (property)', () => {
    fc.assert(
      fc.property(text, (t) => {
        const out = renderMrkdwn(t);
        expect(rawControl(out)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});

describe('renderMarkdownText', () => {
  it('never lets a control sequence through (property)', () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(markdownControl(renderMarkdownText(t))).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('renders stable prefixes as prefixes of the whole (property)', () => {
    fc.assert(
      fc.property(text, fc.nat(), (t, cut) => {
        const prefix = t.slice(0, cut % (t.length + 1));
        const stable = prefix.slice(0, stablePrefixEnd(prefix));
        expect(renderMarkdownText(t).startsWith(renderMarkdownText(stable))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('breaks control sequences and broadcasts in any case', () => {
    expect(renderMarkdownText('<!CHANNEL> <@U1> <#C1> @EveryOne @here.')).toBe(
      '<\u200B!CHANNEL> <\u200B@U1> <\u200B#C1> @\u200BEveryOne @\u200Bhere.',
    );
  });

  it('stablePrefixEnd is the end of the last whitespace', () => {
    expect(stablePrefixEnd('one two thr')).toBe(8);
    expect(stablePrefixEnd('one\ntwo')).toBe(4);
    expect(stablePrefixEnd('word')).toBe(0);
    expect(stablePrefixEnd('a ')).toBe(2);
  });

  it('leaves ordinary text alone', () => {
    expect(renderMarkdownText('a **b** `c < d` e@example.com')).toBe('a **b** `c < d` e@example.com');
  });
});
