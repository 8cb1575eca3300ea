import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../emulator/index.js';
import { run } from './chat.js';

// The terminal chat on the OpenAI-compatible forms (the transcript kept in memory for the run).

const KEY = 'cli-test-key';
let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ form: 'all', apiKey: KEY, bots: ['demo-bot'], chunkDelayMs: 0 });
});
afterAll(() => emu.close());
beforeEach(() => emu.reset());

function sink() {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

async function chat(lines: string[], form: string) {
  const out = sink();
  const err = sink();
  const code = await run([], {
    stdin: Readable.from([lines.map((l) => `${l}\n`).join('')]),
    stdout: out.stream,
    stderr: err.stream,
    env: { CHAT_API_URL: emu.url, CHAT_API_KEY: KEY, CHAT_BOT_ID: 'demo-bot', CHAT_API_FORM: form },
  });
  return { code, stdout: out.text(), stderr: err.text() };
}

const bodies = () => emu.requests.map((r) => r.body as Record<string, unknown>);

describe('chat on the OpenAI-compatible forms', () => {
  it('chat-completions: the second turn carries the first; /reset starts empty', async () => {
    const r = await chat(['one', 'two', '/reset', 'three'], 'chat-completions');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('You said: one\nYou said: two\nYou said: three\n');
    const [, second, third] = bodies();
    expect(second?.messages).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'You said: one' },
      { role: 'user', content: 'two' },
    ]);
    expect(third?.messages).toEqual([{ role: 'user', content: 'three' }]);
  });

  it('responses: the second turn names the first response; /reset starts without one', async () => {
    const r = await chat(['one', 'two', '/reset', 'three'], 'responses');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('You said: one\nYou said: two\nYou said: three\n');
    const [first, second, third] = bodies();
    expect(first?.previous_response_id).toBeUndefined();
    expect(second?.previous_response_id).toMatch(/^resp_/);
    expect(third?.previous_response_id).toBeUndefined();
  });
});
