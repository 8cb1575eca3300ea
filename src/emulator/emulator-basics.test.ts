import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from './index.js';
import { KEY, get, post } from '../../test/support/emulator.js';

let emu: Emulator;
beforeEach(async () => {
  emu = await startEmulator({ apiKey: KEY, bots: ['demo-bot'], chunkDelayMs: 0 });
});
afterEach(async () => {
  await emu.close();
});

describe('emulator basics', () => {
  it('A1 answers with an echo and a new conversation id', async () => {
    const r = await post(emu.url, '/api/v1/chat/demo-bot/message', { message: 'hello' });
    expect(r.status).toBe(200);
    const body = r.json();
    expect(body.success).toBe(true);
    expect(body.data.response).toBe('You said: hello');
    expect(body.data.conversationId).toMatch(/^conv_/);
  });

  it('B1 answers and A2 streams sse-json', async () => {
    const b = await post(emu.url, '/v1/chat/send', { bot_id: 'demo-bot', message: 'hi' });
    expect(b.json().response).toBe('You said: hi');
    const s = await post(emu.url, '/api/v1/chat/demo-bot/stream', { message: 'hi' });
    expect(s.headers['content-type']).toContain('text/event-stream');
    expect(s.text).toContain('"type":"done"');
    expect(await get(emu.url, '/v1/chat/conversations')).toMatchObject({ status: 200 });
  });
});
