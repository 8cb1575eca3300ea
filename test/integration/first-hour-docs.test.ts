import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PG_TEST_URL } from '../support/pg.js';

// The docs a newcomer reads first say what the code does (issue 41): every emulator directive is
// in docs/emulator.md, and the README names what `npm test` needs, as the test helpers find it.

const read = (p: string) => readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8');

describe('first-hour docs', () => {
  it('docs/emulator.md lists every reply directive the emulator reads', () => {
    const source = read('src/emulator/replies.ts');
    const alternation = /const DIRECTIVE = \/\\\[\(([a-z|]+)\)/.exec(source)?.[1];
    expect(alternation, 'the DIRECTIVE pattern in src/emulator/replies.ts').toBeDefined();
    const names = (alternation ?? '').split('|');
    expect(names).toContain('table');
    const doc = read('docs/emulator.md');
    for (const name of names) expect(doc, `[${name} N]`).toMatch(new RegExp(`\`\\[${name} [A-Z]+\\]\``));
  });

  it('the README names what npm test needs: PostgreSQL (TEST_DATABASE_URL) and Chromium, and that they skip', () => {
    const readme = read('README.md');
    if (process.env.TEST_DATABASE_URL === undefined) expect(readme).toContain(PG_TEST_URL);
    expect(readme).toContain('TEST_DATABASE_URL');
    const browser = read('test/browser/browser-bridge.ts');
    expect(browser).toContain("process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'");
    expect(readme).toContain('`/usr/bin/chromium`');
    expect(readme).toContain('CHROMIUM_PATH');
    expect(readme).toMatch(/skip\s+without it/);
  });

  it('the README shows one request and answer of each form', () => {
    const readme = read('README.md');
    expect(readme).toContain('### Which form does my service speak?');
    expect(readme).toContain('/api/v1/chat/demo-bot/message');
    expect(readme).toContain('/v1/chat/send');
    expect(readme).toMatch(/"conversationId":"conv_/);
    expect(readme).toMatch(/"session_id":"/);
    expect(readme).toContain('CHAT_API_FORM=chat-completions');
  });
});
