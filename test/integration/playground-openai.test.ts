import { afterEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.js';
import type { PlaygroundWorld, Session } from './playground-http.js';
import { call, conversationEvents, openPage, pageHeaders, post, startPlayground } from './playground-http.js';

// The playground on an OpenAI-compatible upstream (issue 40), wired by main.ts as `start` does
// (the store's transcripts handed to Chat Completions): a streamed reply, a follow-up that
// remembers, the conversation read back, and "New conversation" forgetting.

let w: PlaygroundWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

async function start(form: 'chat-completions' | 'responses'): Promise<{ port: number; emu: Emulator }> {
  // CHAT_API_URL as the server's users know it: its OpenAI base URL.
  w = await startPlayground({ allowRemote: false }, (emu) => ({ CHAT_API_FORM: form, CHAT_API_URL: `${emu.url}/v1` }), {
    name: 'playground-openai',
    emulator: { form, apiKey: 'dev-key', bots: ['demo-bot'], chunkDelayMs: 1 },
  });
  return { port: w.port, emu: w.emulator };
}

async function ask(port: number, s: Session, conversation: string, text: string): Promise<string> {
  const stream = await conversationEvents(port, s, conversation);
  const sent = await post(port, 'send', pageHeaders(s), { conversation, text });
  expect(sent.status).toBe(202);
  const last = await stream.next((e) => (e.data as { state?: string }).state === 'final', 30_000);
  stream.close();
  return (last.data as { text: string }).text;
}

const bodies = (e: Emulator) =>
  e.requests
    .filter((r) => r.endpoint === 'stream' || r.endpoint === 'send')
    .map((r) => r.body as Record<string, unknown>);

describe.each(['chat-completions', 'responses'] as const)('the playground on %s', (form) => {
  it('streams replies, remembers the conversation, reads it back, and a new conversation forgets', async () => {
    const { port, emu: upstream } = await start(form);
    const s = await openPage(port);
    expect(await ask(port, s, 'talk1', 'hello there')).toBe('You said: hello there');
    expect(await ask(port, s, 'talk1', 'and again')).toBe('You said: and again');
    const [, second] = bodies(upstream);
    if (form === 'chat-completions') {
      expect(second?.messages).toEqual([
        { role: 'user', content: 'hello there' },
        { role: 'assistant', content: 'You said: hello there' },
        { role: 'user', content: 'and again' },
      ]);
    } else {
      expect(second?.previous_response_id).toMatch(/^resp_/);
    }
    const history = await call(port, 'GET', `/playground/api/history?conversation=talk1`, pageHeaders(s));
    expect(history.status).toBe(200);
    const texts = (JSON.parse(history.body) as { messages: { text: string }[] }).messages.map((m) => m.text);
    expect(texts).toEqual(['hello there', 'You said: hello there', 'and again', 'You said: and again']);

    expect(await ask(port, s, 'talk2', 'someone new')).toBe('You said: someone new');
    const third = bodies(upstream)[2];
    if (form === 'chat-completions') expect(third?.messages).toEqual([{ role: 'user', content: 'someone new' }]);
    else expect(third?.previous_response_id).toBeUndefined();
  });
});
