import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { parseRawEnv } from '../../config/config.js';
import { configForStart } from '../../config/start-config.js';
import { createLogger } from '../../logger.js';
import { useBuiltInEmulator } from './index.js';

// Issue 39: the emulator a plain `npm start` runs answered on 127.0.0.1 with the fixed key
// `dev-key` and no Host check, its admin paths on: a rebinding page or any local user read every
// playground message (`curl -H 'Host: rebind.example' -H 'Authorization: Bearer dev-key'
// …/_emulator/requests`).

function get(url: string, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request({ host: u.hostname, port: u.port, path, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the built-in emulator', () => {
  it('has a key of its own per process, checks Host, and serves no admin paths', async () => {
    const { config } = configForStart(parseRawEnv({}));
    const close = await useBuiltInEmulator(config, createLogger({ level: 'silent' }));
    const { config: other } = configForStart(parseRawEnv({}));
    const closeOther = await useBuiltInEmulator(other, createLogger({ level: 'silent' }));
    try {
      const { url, apiKey } = config.upstream;
      expect(apiKey).not.toBe('dev-key');
      expect(apiKey.length).toBeGreaterThanOrEqual(32);
      expect(other.upstream.apiKey).not.toBe(apiKey);
      const host = new URL(url).host;
      expect(await get(url, '/v1/chat/conversations', { host, authorization: 'Bearer dev-key' })).toBe(401);
      expect(await get(url, '/v1/chat/conversations', { host, authorization: `Bearer ${apiKey}` })).toBe(200);
      const rebind = { host: 'rebind.example', authorization: `Bearer ${apiKey}` };
      expect(await get(url, '/v1/chat/conversations', rebind)).toBe(403);
      expect(await get(url, '/_emulator/requests', rebind)).toBe(403);
      expect(await get(url, '/_emulator/requests', { host, authorization: `Bearer ${apiKey}` })).toBe(404);
    } finally {
      await close();
      await closeOther();
    }
  });
});
