import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from './index.js';

// The fake refuses what Slack refuses: `text` over 40,000 characters (msg_too_long), a section
// block's text over 3,000 (invalid_blocks), more than 50 blocks (invalid_blocks); at the limits it
// takes the write.

let slack: FakeSlack;
beforeAll(async () => {
  slack = await startFakeSlack({ limits: {} });
});
afterAll(async () => {
  await slack?.close();
});

async function call(
  method: string,
  body: Record<string, unknown>,
): Promise<{ ok: boolean; error?: string; ts?: string }> {
  const res = await fetch(`${slack.apiUrl}${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${slack.botToken}`, 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as { ok: boolean; error?: string; ts?: string };
}

const section = (n: number) => ({ type: 'section', text: { type: 'mrkdwn', text: 'x'.repeat(n) } });

describe('fake Slack: message limits', () => {
  it('text over 40,000 characters: msg_too_long on post and update', async () => {
    expect(await call('chat.postMessage', { channel: 'C1', text: 'a'.repeat(40_001) })).toMatchObject({
      ok: false,
      error: 'msg_too_long',
    });
    const posted = await call('chat.postMessage', { channel: 'C1', text: 'short' });
    expect(posted.ok).toBe(true);
    expect(await call('chat.update', { channel: 'C1', ts: posted.ts, text: 'a'.repeat(40_001) })).toMatchObject({
      ok: false,
      error: 'msg_too_long',
    });
  });

  it('a section of 3,000 characters is taken, one of 3,001 is invalid_blocks', async () => {
    expect(await call('chat.postMessage', { channel: 'C1', text: 'f', blocks: [section(3000)] })).toMatchObject({
      ok: true,
    });
    expect(await call('chat.postMessage', { channel: 'C1', text: 'f', blocks: [section(3001)] })).toMatchObject({
      ok: false,
      error: 'invalid_blocks',
    });
    const posted = await call('chat.postMessage', { channel: 'C1', text: 'f' });
    expect(
      await call('chat.update', { channel: 'C1', ts: posted.ts, text: 'f', blocks: [section(10), section(3001)] }),
    ).toMatchObject({ ok: false, error: 'invalid_blocks' });
  });

  it('50 blocks are taken, 51 are invalid_blocks', async () => {
    const blocks = (n: number) => Array.from({ length: n }, () => section(1));
    expect(await call('chat.postMessage', { channel: 'C1', text: 'f', blocks: blocks(50) })).toMatchObject({
      ok: true,
    });
    expect(await call('chat.postMessage', { channel: 'C1', text: 'f', blocks: blocks(51) })).toMatchObject({
      ok: false,
      error: 'invalid_blocks',
    });
  });

  const raw = (text: string) => ({ type: 'raw_text', text });
  const table = (rows: number, cells: number) => ({
    type: 'table',
    rows: Array.from({ length: rows }, (_r, i) => Array.from({ length: cells }, (_c, j) => raw(`${i}.${j}`))),
  });

  it('a table of 100 rows of 20 cells is taken; 101 rows, 21 cells or a second table are invalid_blocks', async () => {
    const post = (blocks: unknown[]) => call('chat.postMessage', { channel: 'C1', text: 'f', blocks });
    expect(await post([section(5), table(100, 20), section(5)])).toMatchObject({ ok: true });
    expect(await post([table(101, 2)])).toMatchObject({ ok: false, error: 'invalid_blocks' });
    expect(await post([table(2, 21)])).toMatchObject({ ok: false, error: 'invalid_blocks' });
    expect(await post([table(2, 2), section(5), table(2, 2)])).toMatchObject({ ok: false, error: 'invalid_blocks' });
  });

  it('a table cell must be raw_text with text or rich_text; alignments are left, center, right', async () => {
    const post = (blocks: unknown[]) => call('chat.postMessage', { channel: 'C1', text: 'f', blocks });
    const rich = {
      type: 'rich_text',
      elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'x' }] }],
    };
    expect(
      await post([{ type: 'table', rows: [[raw('a'), rich]], column_settings: [{ align: 'right' }, {}] }]),
    ).toMatchObject({
      ok: true,
    });
    expect(await post([{ type: 'table', rows: [[raw('')]] }])).toMatchObject({ ok: false, error: 'invalid_blocks' });
    expect(await post([{ type: 'table', rows: [[{ type: 'mrkdwn', text: 'a' }]] }])).toMatchObject({
      ok: false,
      error: 'invalid_blocks',
    });
    expect(await post([{ type: 'table', rows: [[raw('a')]], column_settings: [{ align: 'middle' }] }])).toMatchObject({
      ok: false,
      error: 'invalid_blocks',
    });
  });
});
