import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasControlSequence, renderMarkdownText, renderMrkdwn, stablePrefixEnd } from './render.js';

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
    expect(out.match(/```/g)).toHaveLength(2);
    expect(out).toContain('1 &lt; 2');
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
        expect(hasControlSequence(renderMarkdownText(t))).toBe(false);
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

  it('leaves ordinary text alone', () => {
    expect(renderMarkdownText('a **b** `c < d` e@example.com')).toBe('a **b** `c < d` e@example.com');
  });
});
