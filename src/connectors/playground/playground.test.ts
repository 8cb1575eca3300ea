import { describe, expect, it } from 'vitest';
import { parseRawEnv } from '../../config/config.js';
import { isLoopback, playgroundPlan, playgroundUrl } from './index.js';

const plan = (env: Record<string, string>) => playgroundPlan(parseRawEnv(env));
const UPSTREAM = { CHAT_API_URL: 'http://127.0.0.1:8787', CHAT_API_KEY: 'k', CHAT_BOT_ID: 'b' };

describe('when the playground runs', () => {
  it('no platform: on, loopback only, the emulator as upstream when CHAT_API_URL is unset', () => {
    expect(plan({})).toEqual({ enabled: true, allowRemote: false, emulator: true });
    expect(plan(UPSTREAM)).toEqual({ enabled: true, allowRemote: false, emulator: false });
  });

  it('a platform configured: off unless PLAYGROUND=on, and never the emulator', () => {
    expect(plan({ ...UPSTREAM, DISCORD_BOT_TOKEN: 't' }).enabled).toBe(false);
    expect(plan({ ...UPSTREAM, SLACK_BOT_TOKEN: 'xoxb', SLACK_SIGNING_SECRET: 's' }).enabled).toBe(false);
    expect(plan({ ...UPSTREAM, DISCORD_BOT_TOKEN: 't', PLAYGROUND: 'on' })).toEqual({
      enabled: true,
      allowRemote: true,
      emulator: false,
    });
    expect(plan({ DISCORD_BOT_TOKEN: 't', PLAYGROUND: 'on' }).emulator).toBe(false);
  });

  it('PLAYGROUND=off turns it off always; other values are refused', () => {
    expect(plan({ PLAYGROUND: 'off' }).enabled).toBe(false);
    expect(plan({ ...UPSTREAM, PLAYGROUND: 'OFF' }).enabled).toBe(false);
    expect(() => plan({ PLAYGROUND: 'yes' })).toThrow(/PLAYGROUND: must be one of: auto, on, off/);
  });

  it('answers loopback addresses only (unless opened)', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) expect(isLoopback(a)).toBe(true);
    for (const a of ['10.0.0.1', '::ffff:192.168.1.2', '2001:db8::1', undefined]) expect(isLoopback(a)).toBe(false);
  });

  it('prints a URL a browser on this machine can open', () => {
    expect(playgroundUrl('0.0.0.0', 3000)).toBe('http://127.0.0.1:3000/');
    expect(playgroundUrl('::', 3000)).toBe('http://127.0.0.1:3000/');
    expect(playgroundUrl('::1', 8080)).toBe('http://[::1]:8080/');
    expect(playgroundUrl('127.0.0.1', 80)).toBe('http://127.0.0.1:80/');
  });
});
