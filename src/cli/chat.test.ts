import { PassThrough, Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../emulator/index.js';
import { createChatService } from '../upstream/index.js';
import { run } from './chat.js';

// The chat command with its streams injected, against the in-process emulator.

const KEY = 'cli-test-key';
let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ apiKey: KEY, bots: ['demo-bot'], chunkDelayMs: 0, maxMessageChars: 500 });
});
afterAll(() => emu.close());
beforeEach(() => {
  emu.reset();
  emu.setOptions({ streamFormat: 'sse-json', streamIds: 'both' });
});

function sink() {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

async function chat(lines: string[], env: Record<string, string> = {}, args: string[] = [], waits?: number[]) {
  const out = sink();
  const err = sink();
  const code = await run(args, {
    // The retry waits recorded and skipped (no sleeping in tests); the real client otherwise.
    ...(waits
      ? {
          createService: (cfg) =>
            createChatService({
              ...cfg,
              sleep: async (ms) => {
                waits.push(ms);
              },
            }),
        }
      : {}),
    stdin: Readable.from([lines.map((l) => `${l}\n`).join('')]),
    stdout: out.stream,
    stderr: err.stream,
    env: { CHAT_API_URL: emu.url, CHAT_API_KEY: KEY, CHAT_BOT_ID: 'demo-bot', CHAT_API_FORM: 'a', ...env },
  });
  return { code, stdout: out.text(), stderr: err.text() };
}

const sent = () => emu.requests.map((r) => [r.endpoint, r.conversationId]);

describe('chat while the upstream is busy', () => {
  it("shows the upstream's 429 and Retry-After while it waits, then the reply", async () => {
    emu.injectFault({ status: 429, times: 1, retryAfterSeconds: 20 });
    const waits: number[] = [];
    const r = await chat(['hello'], {}, [], waits);
    expect(waits).toEqual([20_000]);
    expect(r).toEqual({
      code: 0,
      stdout: 'You said: hello\n',
      stderr: '(the assistant is busy (429), retrying in 20 s)\n',
    });
  });

  it('`[status 429]` on every try: a note every 5 s of waiting, then the error', async () => {
    const waits: number[] = [];
    const r = await chat(['x [status 429]'], {}, [], waits);
    expect(r.code).toBe(1);
    const notes = r.stderr.split('\n').filter((l) => l.startsWith('('));
    expect(notes[0]).toBe('(the assistant is busy (429), retrying in 1 s)');
    // 30 s of budget in 1 s waits: a note at 0, 5, ... 25 s waited, not one a second.
    expect(notes).toHaveLength(Math.ceil(waits.length / 5));
    expect(r.stderr).toMatch(/\nerror: the assistant is busy, try again shortly: /);
  });
});

describe('chat, input not a terminal', () => {
  it('Form A: one reply per line, the conversation kept from the reply', async () => {
    const r = await chat(['hello', '', 'and more 🌍']);
    expect(r).toEqual({ code: 0, stdout: 'You said: hello\nYou said: and more 🌍\n', stderr: '' });
    const [first, second] = emu.requests;
    expect(first?.conversationId).toBeUndefined();
    expect(second?.conversationId).toMatch(/\S/);
    expect(first?.metadata).toEqual({ source: 'terminal' });
  });

  it.each(['sse-text', 'ndjson', 'plain'] as const)(
    'Form B, %s: one minted session for every turn; /reset starts another',
    async (streamFormat) => {
      emu.setOptions({ streamFormat });
      const r = await chat(['one', 'two', '/reset', 'three'], { CHAT_API_FORM: 'b' });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('You said: one\nYou said: two\nYou said: three\n');
      const ids = emu.requests.map((q) => q.conversationId);
      expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(ids[1]).toBe(ids[0]);
      expect(ids[2]).toMatch(/^[0-9a-f-]{36}$/);
      expect(ids[2]).not.toBe(ids[0]);
    },
  );

  it('Form A /reset: the next turn starts a new conversation', async () => {
    await chat(['one', '/reset', 'two', 'three']);
    const ids = emu.requests.map((q) => q.conversationId);
    expect(ids[0]).toBeUndefined();
    expect(ids[1]).toBeUndefined();
    expect(ids[2]).toMatch(/\S/);
  });

  it('--bot overrides CHAT_BOT_ID (and stands in for it)', async () => {
    const r = await chat(['hi'], { CHAT_BOT_ID: '' }, ['--bot', 'demo-bot']);
    expect(r.code).toBe(0);
    expect(emu.requests[0]?.botId).toBe('demo-bot');
    const bad = await chat(['hi'], {}, ['--bot=ghost']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: the bot "ghost" does not exist.*\n$/);
    expect(bad.stderr.split('\n')).toHaveLength(2);
  });

  it('CHAT_STREAMING=off uses the one-response endpoint', async () => {
    const r = await chat(['one', 'two'], { CHAT_STREAMING: 'off' });
    expect(r.stdout).toBe('You said: one\nYou said: two\n');
    expect(sent().map(([e]) => e)).toEqual(['send', 'send']);
    expect(sent()[1]?.[1]).toMatch(/\S/);
  });

  it('Form A: a stream that shows no conversation id makes first turns use A1', async () => {
    emu.setOptions({ streamIds: 'none' });
    const r = await chat(['one', 'two', '/reset', 'three', 'four']);
    expect(r.stdout).toBe('You said: one\nYou said: two\nYou said: three\nYou said: four\n');
    const s = sent();
    // one: a stream, no id shown; two: a new conversation again, by A1; after /reset A1 too.
    expect(s.map(([e]) => e)).toEqual(['stream', 'send', 'send', 'stream']);
    expect(s[1]?.[1]).toBeUndefined();
    expect(s[2]?.[1]).toBeUndefined();
    expect(s[3]?.[1]).toMatch(/\S/);
  });

  it('an error: one line on stderr, exit 1, the rest of the input unread', async () => {
    const r = await chat(['first', 'boom [status 400]', 'never'], { CHAT_API_FORM: 'b' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('You said: first\n');
    expect(r.stderr).toMatch(/^error: the assistant refused the request: B2 stream: upstream answered 400 /);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(emu.requests.filter((q) => q.message === 'never')).toEqual([]);
  });

  it('a reply cut off: the text so far, a mark, and the error', async () => {
    const r = await chat(['please [cut 2]']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^You said.* \[…cut off\]\n$/);
    expect(r.stderr).toMatch(/^error: the reply was cut off/);
  });

  it('an expired session is renewed once, with a note', async () => {
    const out = sink();
    const err = sink();
    const stdin = new PassThrough();
    const done = run([], {
      stdin,
      stdout: out.stream,
      stderr: err.stream,
      env: { CHAT_API_URL: emu.url, CHAT_API_KEY: KEY, CHAT_BOT_ID: 'demo-bot', CHAT_API_FORM: 'b' },
    });
    stdin.write('one\n');
    await until(() => out.text() === 'You said: one\n');
    emu.expire(String(emu.requests[0]?.conversationId));
    stdin.end('two\n');
    expect(await done).toBe(0);
    expect(out.text()).toBe('You said: one\nYou said: two\n');
    expect(err.text()).toMatch(/earlier context was not kept/);
    const ids = emu.requests.map((q) => q.conversationId);
    expect(ids).toHaveLength(3);
    expect(ids[1]).toBe(ids[0]);
    expect(ids[2]).not.toBe(ids[0]);
  });

  it('CHAT_MAX_MESSAGE_CHARS refuses locally', async () => {
    const r = await chat(['x'.repeat(11)], { CHAT_MAX_MESSAGE_CHARS: '10' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: the message is too long/);
    expect(emu.requests).toEqual([]);
  });

  it('a configuration problem: the message and exit 2', async () => {
    const r = await chat(['x'], { CHAT_API_URL: '' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('CHAT_API_URL');
    expect((await chat([], {}, ['--nope'])).code).toBe(2);
  });

  it('the API key is refused: exit 1, the key not printed', async () => {
    const r = await chat(['x'], { CHAT_API_KEY: 'not-the-key-123' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: the assistant refused the API key/);
    expect(r.stderr).not.toContain('not-the-key-123');
  });
});

describe('chat on a terminal', () => {
  function tty() {
    const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => {} });
    return input;
  }

  it('prompts, streams the reply, leaves on Ctrl-D', async () => {
    const stdin = tty();
    const out = sink();
    const done = run([], {
      stdin,
      stdout: out.stream,
      stderr: sink().stream,
      env: { CHAT_API_URL: emu.url, CHAT_API_KEY: KEY, CHAT_BOT_ID: 'demo-bot' },
    });
    stdin.write('hello\r');
    await until(() => out.text().includes('You said: hello'));
    stdin.write('\x04');
    expect(await done).toBe(0);
    expect(out.text()).toContain('> ');
  });

  it('Ctrl-C during a reply stops it and leaves cleanly', async () => {
    const stdin = tty();
    const out = sink();
    const err = sink();
    const done = run([], {
      stdin,
      stdout: out.stream,
      stderr: err.stream,
      env: { CHAT_API_URL: emu.url, CHAT_API_KEY: KEY, CHAT_BOT_ID: 'demo-bot' },
    });
    stdin.write('slow [delay 200] [chunks 20]\r');
    await until(() => emu.requests.length === 1);
    stdin.write('\x03');
    expect(await done).toBe(0);
    expect(err.text()).toBe('');
  });
});

async function until(cond: () => boolean, ms = 5_000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
