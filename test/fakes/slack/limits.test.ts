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
});
