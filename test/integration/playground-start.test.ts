import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BridgeChild, ensureBuilt, killHard, spawnBridge } from '../resilience/bridge-child.js';
import { openEvents, openPage, pageHeaders, post } from './playground-http.js';

// `npm start` on a fresh clone: no variable, no file. The bridge runs the playground at `/` with
// the built-in emulator as its upstream (said once in the log) instead of exiting; PLAYGROUND=off
// brings back the old refusal.

let child: BridgeChild | undefined;

beforeAll(() => ensureBuilt(), 120_000);
afterEach(async () => {
  await killHard(child);
  child = undefined;
});

/** Waits (bounded) until the child's log holds a line matching `re`: its pipe may lag behind /readyz. */
async function logged(c: BridgeChild, re: RegExp): Promise<string> {
  for (let i = 0; i < 250; i++) {
    const line = c.log.find((l) => re.test(l));
    if (line !== undefined) return line;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no log line matches ${String(re)}:\n${c.tail()}`);
}

/** As the page does: a message, and the conversation's event stream until the reply is no longer streaming. */
async function finalReply(base: string, conversation: string): Promise<{ text: string; state: string }> {
  const port = Number(new URL(base).port);
  const s = await openPage(port);
  const stream = await openEvents(port, `/playground/events?conversation=${conversation}&page_token=${s.token}`, {
    host: s.host,
    cookie: s.cookie,
  });
  expect(stream.headers['content-type']).toContain('text/event-stream');
  const sent = await post(port, 'send', pageHeaders(s), { conversation, text: 'hello there' });
  expect(sent.status).toBe(202);
  // Replies only: the stream also says how the turn goes (event: turn, see turn-events.ts).
  const last = await stream.next((e) => e.event === 'reply' && (e.data as { state: string }).state !== 'streaming');
  stream.close();
  return last.data as { text: string; state: string };
}

describe('npm start with nothing configured', () => {
  it('serves the playground with the built-in emulator and prints its URL', async () => {
    child = await spawnBridge({});
    await child.waitReady();
    await logged(child, /playground: open .* in a browser/);
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

  it('PLAYGROUND=on without PLAYGROUND_TOKEN does not start (exit 2, saying what to set); with one it warns with the URL', async () => {
    child = await spawnBridge({ PLAYGROUND: 'on' });
    await child.exited;
    expect(child.exitCode).toBe(2);
    expect(child.log.join('\n')).toContain('set PLAYGROUND_TOKEN');
    const token = 'an-open-playground-token';
    child = await spawnBridge({ PLAYGROUND: 'on', PLAYGROUND_TOKEN: token });
    await child.waitReady();
    const line = await logged(child, /playground: open to other machines/);
    expect(line).toMatch(/"level":40.*\/playground\?token=<PLAYGROUND_TOKEN>/);
    const lines = child.log.join('\n');
    expect(lines).not.toContain(token);
    expect((await fetch(`${child.base}/`)).status).toBe(401);
    child.kill('SIGTERM');
    await child.exited;
    expect(child.exitCode).toBe(0);
  });

  it('a weak PLAYGROUND_TOKEN (aaaa…) does not start: exit 2, naming it and how strong one must be', async () => {
    child = await spawnBridge({ PLAYGROUND: 'on', PLAYGROUND_TOKEN: 'a'.repeat(24) });
    await child.exited;
    expect(child.exitCode).toBe(2);
    const lines = child.log.join('\n');
    expect(lines).toContain('PLAYGROUND_TOKEN: too weak');
    expect(lines).toContain('at least 20 characters, at least 10 of them different');
    expect(lines).not.toContain('a'.repeat(24));
  });

  it('PLAYGROUND=off: no platform is still a configuration error (exit 2)', async () => {
    child = await spawnBridge({ PLAYGROUND: 'off' });
    await child.exited;
    expect(child.exitCode).toBe(2);
    expect(child.log.join('\n')).toContain('no platform configured');
  });
});
