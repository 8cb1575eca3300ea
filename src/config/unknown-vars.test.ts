import { describe, expect, it } from 'vitest';
import { envSchema } from './env-schema.js';
import { describeUnknown, editDistance, KNOWN_VARIABLES, unknownVariables } from './unknown-vars.js';

describe('unknown variable names', () => {
  it('knows every variable of the schema (a new one is covered without a list to update)', () => {
    for (const name of Object.keys(envSchema.shape)) expect(KNOWN_VARIABLES).toContain(name);
  });

  it('CHAT_API_BASE_URL in .env: named, with CHAT_API_URL as the likely meant name', () => {
    const found = unknownVariables({ CHAT_API_BASE_URL: 'https://x' }, new Set(['CHAT_API_BASE_URL']));
    expect(found).toEqual([{ name: 'CHAT_API_BASE_URL', source: '.env', suggestion: 'CHAT_API_URL' }]);
    expect(describeUnknown(found[0] ?? { name: '', source: '.env' })).toBe(
      'CHAT_API_BASE_URL in .env is not a variable the bridge reads and is ignored: did you mean CHAT_API_URL?',
    );
  });

  it('a near miss without our prefix, a case slip, and our prefix with no close name', () => {
    const found = unknownVariables({
      DATABSE_URL: 'postgres://x',
      chat_api_key: 'k',
      SLACK_SOMETHING_ELSE_ENTIRELY_DIFFERENT: '1',
      DISCORD_TOKEN: 't',
    });
    expect(found).toEqual([
      { name: 'DATABSE_URL', source: 'environment', suggestion: 'DATABASE_URL' },
      { name: 'DISCORD_TOKEN', source: 'environment', suggestion: 'DISCORD_BOT_TOKEN' },
      { name: 'SLACK_SOMETHING_ELSE_ENTIRELY_DIFFERENT', source: 'environment' },
      { name: 'chat_api_key', source: 'environment', suggestion: 'CHAT_API_KEY' },
    ]);
    expect(describeUnknown({ name: 'chat_api_key', source: 'environment', suggestion: 'CHAT_API_KEY' })).toContain(
      'did you mean CHAT_API_KEY? (names are case-sensitive)',
    );
    expect(describeUnknown({ name: 'SLACK_X', source: 'environment' })).toContain('see .env.example');
  });

  it("leaves known names and other programs' variables alone", () => {
    const env = {
      CHAT_API_URL: 'https://x',
      SLACK_BOT_TOKEN: 'xoxb-1',
      PATH: '/usr/bin',
      HOME: '/root',
      HOSTNAME: 'box',
      PWD: '/work',
      NODE_ENV: 'production',
      TEST_DATABASE_URL: 'postgres://x',
      LOG_DIR: '/var/log',
      NO_COLOR: '1',
      TERM: 'xterm',
      SHELL: '/bin/sh',
      LANG: 'C.UTF-8',
    };
    expect(unknownVariables(env)).toEqual([]);
  });

  it('editDistance counts insertions, deletions and substitutions, and stops early past a bound', () => {
    expect(editDistance('HOST', 'HOST')).toBe(0);
    expect(editDistance('DATABSE_URL', 'DATABASE_URL')).toBe(1);
    expect(editDistance('PORT', 'PROT')).toBe(2);
    expect(editDistance('a', 'abcdefgh', 2)).toBe(3);
  });
});
