import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/config.js';
import { type Emulator, startEmulator } from '../emulator/index.js';
import { createCheckClient } from './http.js';
import type { CheckRow } from './types.js';
import { checkUpstream } from './upstream-check.js';

// doctor's upstream rows for the OpenAI-compatible forms: against the emulator speaking them, and
// a server that lists no models.

let emu: Emulator;
let bare: Server;
let bareUrl: string;
beforeAll(async () => {
  emu = await startEmulator({ form: 'all', apiKey: 'dev-key', bots: ['demo-bot', 'other-bot'] });
  bare = createServer((_req, res) => res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no"}'));
  await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
  bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await emu.close();
  bare.closeAllConnections();
  await new Promise((r) => bare.close(r));
});

async function check(env: Record<string, string>): Promise<Record<string, CheckRow>> {
  const config = loadConfig({ CHAT_API_KEY: 'dev-key', CHAT_BOT_ID: 'demo-bot', ...env }, { requirePlatform: false });
  const http = createCheckClient(5000);
  try {
    return Object.fromEntries((await checkUpstream(config.upstream, http)).map((r) => [r.check, r]));
  } finally {
    await http.close();
  }
}

describe.each(['chat-completions', 'responses'])('doctor, CHAT_API_FORM=%s', (form) => {
  it('reachable, key accepted, every model named is listed at /v1/models (the URL without /v1 too)', async () => {
    const rows = await check({
      CHAT_API_FORM: form,
      CHAT_API_URL: emu.url,
      BOT_ROUTES: 'slack:T1=other-bot,discord:G1=ghost',
    });
    expect(rows['upstream reachable']?.status).toBe('ok');
    expect(rows['upstream reachable']?.detail).toContain(form === 'responses' ? '(Responses)' : '(Chat Completions)');
    expect(rows['upstream API key']?.status).toBe('ok');
    expect(rows['model demo-bot']?.status).toBe('ok');
    expect(rows['model other-bot']?.status).toBe('ok');
    expect(rows['model ghost']).toMatchObject({ status: 'FAIL' });
    expect(rows['model ghost']?.detail).toContain('demo-bot, other-bot');
    expect(rows['model ghost']?.hint).toMatch(/^BOT_ROUTES names the model/);
    const withV1 = await check({ CHAT_API_FORM: form, CHAT_API_URL: `${emu.url}/v1` });
    expect(withV1['model demo-bot']?.status).toBe('ok');
  });

  it('a refused key fails its row; the models are not judged', async () => {
    const rows = await check({ CHAT_API_FORM: form, CHAT_API_URL: emu.url, CHAT_API_KEY: 'wrong-key' });
    expect(rows['upstream API key']).toMatchObject({ status: 'FAIL', detail: 'refused (401)' });
    expect(rows['model demo-bot']?.status).toBe('skip');
  });

  it('a server that lists no models: reachable, the rest not judged', async () => {
    const rows = await check({ CHAT_API_FORM: form, CHAT_API_URL: bareUrl });
    expect(rows['upstream reachable']?.status).toBe('ok');
    expect(rows['upstream API key']?.status).toBe('skip');
    expect(rows['model demo-bot']).toMatchObject({ status: 'skip' });
    expect(rows['model demo-bot']?.detail).toContain('lists no models');
  });
});
