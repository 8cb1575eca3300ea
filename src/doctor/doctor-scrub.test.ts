import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../cli/doctor.js';

// `doctor` against services that echo the credentials they were sent in their error bodies:
// what the operator sees (and pastes into a bug report) holds none of the configured values.

const servers: Server[] = [];
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'doctor-scrub-'));
});
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Answers every request with `status` and a body that repeats its Authorization header (minus the scheme). */
async function echoing(status: number, shape: (cred: string) => unknown): Promise<string> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const cred = String(req.headers.authorization ?? '').replace(/^(Bearer|Bot)\s+/, '');
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(shape(cred)));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

// None of these match a credential pattern: only scrubbing by value can catch them.
const KEY = 'sk-echo-key-0123456789';
const SLACK_TOKEN = 'slack-token-echo-987';
const DISCORD_TOKEN = 'discord-token-echo-654';

async function doctor(env: Record<string, string>): Promise<string> {
  let out = '';
  const sink = { write: (s: string) => (out += s) };
  await run([], { stdout: sink, stderr: sink, env, dotenvPath: join(dir, 'none.env') });
  return out;
}

describe('doctor scrubs configured secrets by value', () => {
  for (const status of [500, 401, 400, 404]) {
    it(`an upstream that echoes the API key in a ${status} body: the key is not in the output`, async () => {
      const upstream = await echoing(status, (cred) => ({ error: { code: 'BAD', message: `key ${cred} refused` } }));
      const out = await doctor({
        CHAT_API_URL: upstream,
        CHAT_API_KEY: KEY,
        CHAT_BOT_ID: 'demo-bot',
        DATABASE_PATH: join(dir, 'bridge.db'),
      });
      expect(out).toMatch(/upstream/);
      if (status === 500) expect(out).toContain('key [redacted] refused'); // the excerpt is shown, scrubbed
      expect(out).not.toContain(KEY);
    });
  }

  it('an upstream that echoes the API key in hex, uppercase, or split by a zero-width space: none of it is printed', async () => {
    const upstream = await echoing(500, (cred) => ({
      error: {
        code: 'BAD',
        message: `hex ${Buffer.from(cred).toString('hex')} up ${cred.toUpperCase()} zw ${cred.slice(0, 7)}\u200b${cred.slice(7)}`,
      },
    }));
    const out = await doctor({
      CHAT_API_URL: upstream,
      CHAT_API_KEY: KEY,
      CHAT_BOT_ID: 'demo-bot',
      DATABASE_PATH: join(dir, 'bridge.db'),
    });
    expect(out).toMatch(/upstream/);
    expect(out).not.toContain(Buffer.from(KEY).toString('hex').slice(0, 12));
    expect(out.toLowerCase()).not.toContain(KEY.slice(8).toLowerCase());
  });

  it('Slack and Discord echoing their tokens: neither token is printed', async () => {
    const upstream = await echoing(500, (cred) => ({ message: cred }));
    const slack = await echoing(200, (cred) => ({ ok: false, error: `invalid_auth for ${cred}` }));
    const discord = await echoing(401, (cred) => ({ message: `401: Unauthorized ${cred}`, code: 0 }));
    const out = await doctor({
      CHAT_API_URL: upstream,
      CHAT_API_KEY: KEY,
      CHAT_BOT_ID: 'demo-bot',
      DATABASE_PATH: join(dir, 'bridge.db'),
      SLACK_BOT_TOKEN: SLACK_TOKEN,
      SLACK_SIGNING_SECRET: 'signing-secret-echo',
      SLACK_API_URL: `${slack}/api/`,
      DISCORD_BOT_TOKEN: DISCORD_TOKEN,
      DISCORD_API_URL: `${discord}/api`,
    });
    expect(out).toMatch(/slack/);
    expect(out).toMatch(/discord/);
    for (const secret of [KEY, SLACK_TOKEN, DISCORD_TOKEN, 'signing-secret-echo']) expect(out).not.toContain(secret);
  });

  const encodings: [string, (cred: string) => string][] = [
    [
      'HTML-escaped',
      (c) => c.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'),
    ],
    ['lowercase percent-encoded', (c) => encodeURIComponent(c).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())],
    ['base64', (c) => Buffer.from(c, 'utf8').toString('base64')],
    ['base64 of user:key', (c) => Buffer.from(`bridge:${c}`, 'utf8').toString('base64')],
  ];
  for (const [name, encode] of encodings) {
    it(`an upstream that echoes the key ${name}: doctor prints it redacted`, async () => {
      const key = 'sk-echo/key+<0123456789>&more';
      const upstream = await echoing(500, (cred) => ({ error: { code: 'BAD', message: `you sent ${encode(cred)}` } }));
      const out = await doctor({
        CHAT_API_URL: upstream,
        CHAT_API_KEY: key,
        CHAT_BOT_ID: 'demo-bot',
        DATABASE_PATH: join(dir, 'bridge.db'),
      });
      expect(out).toContain('[redacted]');
      expect(out).not.toContain(encode(key));
      expect(out).not.toContain(key);
    });
  }
});
