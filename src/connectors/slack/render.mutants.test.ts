import { describe, expect, it } from 'vitest';
import { hasControlSequence, neutraliseMrkdwn, renderMarkdownText, renderMrkdwn, stablePrefixEnd } from './render.js';

// Exact expected values, written out by hand (never computed by the code under test), one rule
// per case, so that each changed regex, flag or branch in render.ts fails a test.

const Z = '\u200B';

describe('neutraliseMrkdwn', () => {
  it('escapes every &, < and > outside a web or mail link, keeping the three entities', () => {
    expect(neutraliseMrkdwn('a&b<c>d')).toBe('a&amp;b&lt;c&gt;d');
    expect(neutraliseMrkdwn('&amp;&lt;&gt;&quot;')).toBe('&amp;&lt;&gt;&amp;quot;');
    expect(neutraliseMrkdwn('&ampx & &')).toBe('&amp;ampx &amp; &amp;');
    expect(neutraliseMrkdwn('<>')).toBe('&lt;&gt;');
    expect(neutraliseMrkdwn('x <http://a.test')).toBe('x &lt;http://a.test');
    expect(neutraliseMrkdwn('>>')).toBe('&gt;&gt;');
  });

  it('keeps http, https and mailto links, with or without a label, escaping inside them', () => {
    expect(neutraliseMrkdwn('<http://a.test>')).toBe('<http://a.test>');
    expect(neutraliseMrkdwn('<https://b.test/?a=1&b=2>')).toBe('<https://b.test/?a=1&amp;b=2>');
    expect(neutraliseMrkdwn('<mailto:a@b.test>')).toBe('<mailto:a@b.test>');
    expect(neutraliseMrkdwn('<http://a.test|x&y>')).toBe('<http://a.test|x&amp;y>');
    expect(neutraliseMrkdwn('<http://a.test|>')).toBe('<http://a.test|>');
    expect(neutraliseMrkdwn('see <http://a.test|x>y and <https://b.test>.')).toBe(
      'see <http://a.test|x>y and <https://b.test>.',
    );
  });

  it('escapes what only looks like a link: another scheme, a space, a control in the label', () => {
    expect(neutraliseMrkdwn('<ftp://x>')).toBe('&lt;ftp://x&gt;');
    expect(neutraliseMrkdwn('<http://a b>')).toBe('&lt;http://a b&gt;');
    expect(neutraliseMrkdwn('<http://a\tb>')).toBe('&lt;http://a\tb&gt;');
    expect(neutraliseMrkdwn('<http://>')).toBe('&lt;http://&gt;');
    expect(neutraliseMrkdwn('<http://a|b|c>')).toBe('<http://a|b|c>');
    expect(neutraliseMrkdwn('<http://a<b>')).toBe('&lt;http://a&lt;b&gt;');
    expect(neutraliseMrkdwn('<http://a.test|<b>')).toBe('&lt;http://a.test|&lt;b&gt;');
    expect(neutraliseMrkdwn('<http://a.test|<!channel>>')).toBe('&lt;http://a.test|&lt;!channel&gt;&gt;');
    expect(neutraliseMrkdwn('<HTTP://a.test>')).toBe('&lt;HTTP://a.test&gt;');
    expect(neutraliseMrkdwn('x<!here> <http://a.test|ok>')).toBe('x&lt;!here&gt; <http://a.test|ok>');
  });

  it('breaks every broadcast word, in any case, and only whole words', () => {
    expect(neutraliseMrkdwn('@channel @here @everyone')).toBe(`@${Z}channel @${Z}here @${Z}everyone`);
    expect(neutraliseMrkdwn('@Channel @HERE @EveryOne')).toBe(`@${Z}Channel @${Z}HERE @${Z}EveryOne`);
    expect(neutraliseMrkdwn('@channels @hereby @everyones a@b')).toBe('@channels @hereby @everyones a@b');
    expect(neutraliseMrkdwn('@here!')).toBe(`@${Z}here!`);
  });
});

describe('renderMrkdwn', () => {
  it('renders an empty or blank reply as an ellipsis, and trims trailing whitespace', () => {
    expect(renderMrkdwn('')).toBe('…');
    expect(renderMrkdwn('   ')).toBe('…');
    expect(renderMrkdwn('a\n\n')).toBe('a');
  });

  it('converts links and escapes HTML-looking text', () => {
    expect(renderMrkdwn('[m](mailto:a@b.test)')).toBe('<mailto:a@b.test|m>');
    expect(renderMrkdwn('<!-- <!channel> -->')).toBe('&lt;!-- &lt;!channel&gt; --&gt;');
    expect(renderMrkdwn('x @Channel @HERE @everyone @channels')).toBe(
      `x @${Z}Channel @${Z}HERE @${Z}everyone @channels`,
    );
  });
});

describe('renderMrkdwn: what the library makes of odd input', () => {
  it('keeps leading whitespace the library produces (an entity), and drops a block that renders empty', () => {
    expect(renderMrkdwn('&#32;x')).toBe(' x');
    // "&nbsp;" renders as a no-break space, which trims to nothing: no empty paragraph for it.
    expect(renderMrkdwn('a\n\n&nbsp;\n\nb')).toBe('a\n\nb');
  });
});

describe('renderMarkdownText', () => {
  it('breaks <!, <@ and <# (every one) and broadcasts in any case, leaving other < alone', () => {
    expect(renderMarkdownText('<!channel> <@U1> <#C1> <a> < b')).toBe(`<${Z}!channel> <${Z}@U1> <${Z}#C1> <a> < b`);
    expect(renderMarkdownText('<!a<!b')).toBe(`<${Z}!a<${Z}!b`);
    expect(renderMarkdownText('@HERE and @Everyone, @channel')).toBe(`@${Z}HERE and @${Z}Everyone, @${Z}channel`);
    expect(renderMarkdownText('@herein @channel_x')).toBe('@herein @channel_x');
  });
});

describe('stablePrefixEnd', () => {
  it('ends after the last whitespace, or at 0 without any', () => {
    expect(stablePrefixEnd('')).toBe(0);
    expect(stablePrefixEnd('abc')).toBe(0);
    expect(stablePrefixEnd('abc def')).toBe(4);
    expect(stablePrefixEnd('abc ')).toBe(4);
    expect(stablePrefixEnd('a  b')).toBe(3);
    expect(stablePrefixEnd('a b\ncd')).toBe(4);
    expect(stablePrefixEnd(' x')).toBe(1);
  });
});

describe('hasControlSequence', () => {
  it('sees each control and broadcast form, in any case, and nothing else', () => {
    for (const s of ['<!here>', 'a <@U1>', '<#C1>', '@channel', '@Here', 'x @EVERYONE.']) {
      expect(hasControlSequence(s), s).toBe(true);
    }
    for (const s of ['', '<a>', '< !x', '@channels', 'a@hereby', `@${Z}here`, `<${Z}!here>`, '&lt;!here&gt;']) {
      expect(hasControlSequence(s), s).toBe(false);
    }
  });
});
