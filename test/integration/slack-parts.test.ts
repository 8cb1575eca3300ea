import { describe, expect, it } from 'vitest';
import { markdownTextOracle, mrkdwnOracle, slackPartsProblems } from './slack-parts.js';

// The oracle the Slack tests compare with: its rules, on written-out cases (so that a wrong
// rule shows here and not as an agreement with a wrong renderer).

const Z = '\u200B';

describe('mrkdwnOracle', () => {
  it('renders each kind of line by its written rule', () => {
    expect(mrkdwnOracle('## Reply\n\nplain words\n\n- **alpha**: beta\n\n1. one')).toBe(
      `*Reply*\n\nplain words\n\n•   ${Z}*alpha*${Z}: beta\n\n1.  one`,
    );
    expect(mrkdwnOracle('```ts\nif (a < b && c > d) {}\n```')).toBe('```\nif (a &lt; b &amp;&amp; c &gt; d) {}\n```');
  });

  it('fences a note in italics by zero-width spaces', () => {
    expect(mrkdwnOracle('You said: crash\n\n_(reply interrupted)_')).toBe(
      `You said: crash\n\n${Z}_(reply interrupted)_${Z}`,
    );
    expect(mrkdwnOracle('```\nx\n```\n\n_(stopped)_')).toBe(`\`\`\`\nx\n\`\`\`\n\n${Z}_(stopped)_${Z}`);
  });

  it('refuses what it has no rule for', () => {
    expect(() => mrkdwnOracle('a _word_ here')).toThrow(/no rule/);
    expect(() => mrkdwnOracle('_(a <b>)_')).toThrow(/no rule/);
    expect(() => mrkdwnOracle('```\nopen')).toThrow(/left open/);
  });
});

describe('slackPartsProblems', () => {
  it('accepts exact parts, names a lost character', () => {
    expect(slackPartsProblems(['ab cd', 'ef'], 'ab cd ef')).toEqual([]);
    expect(slackPartsProblems(['ab cd', 'f'], 'ab cd ef')).toHaveLength(1);
  });
});

describe('markdownTextOracle', () => {
  it('is the text as written when nothing in it could ping, and refuses the rest', () => {
    expect(markdownTextOracle('a **b** `c < d` e@example.com\n\n_(stopped)_')).toBe(
      'a **b** `c < d` e@example.com\n\n_(stopped)_',
    );
    for (const t of ['<!here>', 'x <@U1>', '<#C1>', 'hi @Channel', '@EVERYONE.'])
      expect(() => markdownTextOracle(t)).toThrow(/no rule/);
  });
});
