import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BridgeChild, ensureBuilt, killHard, spawnBridge } from '../resilience/bridge-child.js';

// `npm start` on a fresh clone: no variable, no file. The bridge runs the playground at `/` with
// the built-in emulator as its upstream (said once in the log) instead of exiting; PLAYGROUND=off
// brings back the old refusal.

let child: BridgeChild | undefined;

beforeAll(() => ensureBuilt(), 120_000);
afterEach(async () => {
  await killHard(child);
  child = undefined;
});

/** Reads the conversation's event stream until a reply's write is no longer streaming. */
async function finalReply(base: string, conversation: string): Promise<{ text: string; state: string }> {
  const res = await fetch(`${base}/playground/events?conversation=${conversation}`, {
    signal: AbortSignal.timeout(20_000),
  });
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const sent = await fetch(`${base}/playground/api/send`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ conversation, text: 'hello there' }),
  });
  expect(sent.status).toBe(202);
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    for (const m of buf.matchAll(/^data: (.*)$/gm)) {
      const v = JSON.parse(m[1] ?? '{}') as { text: string; state: string };
      if (v.state !== 'streaming') return v;
    }
  }
  throw new Error('the event stream ended without a final write');
}

describe('npm start with nothing configured', () => {
  it('serves the playground with the built-in emulator and prints its URL', async () => {
    child = await spawnBridge({});
    await child.waitReady();
    const lines = child.log.join('\n');
    expect(lines).toContain(`playground: open ${child.base}/ in a browser`);
    expect(lines.match(/built-in emulator answers in this process/g)).toHaveLength(1);

    const page = await fetch(`${child.base}/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('aria-label="Message"');
    expect(html).toContain('aria-label="Send"');
    expect(html).not.toMatch(/(src|href)="https?:/); // nothing from outside the machine

    const reply = await finalReply(child.base, 'firstrun');
    expect(reply).toMatchObject({ state: 'final', text: 'You said: hello there' });

    child.kill('SIGTERM');
    await child.exited;
    expect(child.exitCode).toBe(0);
  });

  it('PLAYGROUND=off: no platform is still a configuration error (exit 2)', async () => {
    child = await spawnBridge({ PLAYGROUND: 'off' });
    await child.exited;
    expect(child.exitCode).toBe(2);
    expect(child.log.join('\n')).toContain('no platform configured');
  });
});
