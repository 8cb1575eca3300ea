import { describe, expect, it } from 'vitest';
import { renderTable, summary } from './table.js';
import { fail, ok, skip, warn } from './types.js';

describe('doctor table', () => {
  it('aligns the columns, indents extra detail lines, and lines the fix hints up without long passing rows pushing them', () => {
    const text = renderTable([
      ok('config', 'valid'),
      fail('upstream API key', 'refused (401)', 'CHAT_API_KEY was refused (401): check the key'),
      fail('cfg', 'first problem\nsecond problem', 'fix it'),
      skip('slack', 'not configured'),
      ok('invite', 'https://discord.com/oauth2/authorize?client_id=1'),
    ]);
    expect(text).toBe(
      [
        'CHECK             STATUS  DETAIL         FIX',
        '----------------  ------  -------------  ---',
        'config            ok      valid',
        'upstream API key  FAIL    refused (401)  CHAT_API_KEY was refused (401): check the key',
        'cfg               FAIL    first problem  fix it',
        '                          second problem',
        'slack             skip    not configured',
        'invite            ok      https://discord.com/oauth2/authorize?client_id=1',
        '',
      ].join('\n'),
    );
  });

  it('sums up the rows', () => {
    expect(summary([ok('a', ''), skip('b', '')])).toBe('1 ok, 0 failed, 1 skipped\n');
    expect(summary([fail('a', '', 'x')])).toBe('0 ok, 1 failed, 0 skipped: fix the FAIL rows above\n');
    expect(summary([ok('a', ''), warn('b', 'x', 'y')])).toBe('1 ok, 0 failed, 0 skipped, 1 warned\n');
  });
});
