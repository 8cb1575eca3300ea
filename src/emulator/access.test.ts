import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { parseArgs } from '../cli/emulator.js';
import { type Emulator, startEmulator } from './index.js';
import { hostAllowed } from './options.js';

// Issue 39: the emulator as closed as the playground. A page whose DNS name rebinds to 127.0.0.1
// (its requests carry its own name in Host) gets nothing, whatever key it sends; the admin paths,
// whose request log holds every message received, answer only when asked for.

let emu: Emulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

function get(url: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request({ host: u.hostname, port: u.port, path, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('emulator access', () => {
  it('a rebinding Host gets 403 on every route, with the right key too, and nothing is recorded', async () => {
    emu = await startEmulator({ apiKey: 'k', admin: true });
    const key = { authorization: 'Bearer k' };
    for (const path of ['/_emulator/requests', '/v1/chat/conversations', '/api/v1/chat/demo-bot/conversations', '/x']) {
      for (const host of ['rebind.example', 'rebind.example:80', `localhost.rebind.example:${emu.port}`]) {
        const r = await get(emu.url, path, { ...key, host });
        expect({ path, host, status: r.status }).toEqual({ path, host, status: 403 });
      }
    }
    expect(emu.requests).toEqual([]);
    for (const host of [`127.0.0.1:${emu.port}`, `localhost:${emu.port}`, `[::1]:${emu.port}`, 'app.localhost'])
      expect((await get(emu.url, '/v1/chat/conversations', { ...key, host })).status).toBe(200);
  });

  it('admin paths are off unless asked for (404 with the right key); on with `admin`', async () => {
    emu = await startEmulator({ apiKey: 'k' });
    const headers = { authorization: 'Bearer k', host: `127.0.0.1:${emu.port}` };
    for (const path of ['/_emulator/requests', '/_emulator/options', '/_emulator/conversations?id=x'])
      expect((await get(emu.url, path, headers)).status).toBe(404);
    await emu.close();
    emu = await startEmulator({ apiKey: 'k', admin: true });
    expect((await get(emu.url, '/_emulator/requests', { ...headers, host: `127.0.0.1:${emu.port}` })).status).toBe(200);
  });

  it('bound to a name or every interface, that name or any Host is answered', () => {
    expect(hostAllowed('bridge-emulator:8787', 'bridge-emulator')).toBe(true);
    expect(hostAllowed('emulator:8787', '0.0.0.0')).toBe(true);
    expect(hostAllowed('emulator:8787', '::')).toBe(true);
    expect(hostAllowed('emulator:8787', '127.0.0.1')).toBe(false);
    expect(hostAllowed(undefined, '127.0.0.1')).toBe(false);
    expect(hostAllowed('127.0.0.1.evil.example', '127.0.0.1')).toBe(false);
  });

  it('the command keeps its flags and dev-key; --admin turns the admin paths on', () => {
    const plain = parseArgs([]);
    expect(plain).toMatchObject({ ok: true, opts: { apiKey: 'dev-key', host: '127.0.0.1', port: 8787 } });
    expect(plain.ok && plain.opts.admin).toBeFalsy();
    expect(parseArgs(['--admin', '--port', '9000'])).toMatchObject({ ok: true, opts: { admin: true, port: 9000 } });
  });
});
