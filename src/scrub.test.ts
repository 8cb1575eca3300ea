import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../test/fakes/manual-clock.js';
import { TestConnector } from '../test/fakes/test-connector.js';
import { run as chat } from './cli/chat.js';
import { parseRawEnv } from './config/config.js';
import { postNotice } from './core/intake/notices.js';
import { RateLimitScheduler } from './core/budget/scheduler.js';
import { cachedText } from './server/http-server.js';
import { createLogger, silentLogger } from './logger.js';
import {
  createScrubber,
  MAX_HELD_SECRETS,
  registerHeldSecrets,
  registerSecrets,
  scrubSecrets,
  secretValuesOf,
  urlPasswords,
} from './scrub.js';

// Secrets scrubbed by value: whatever a configured secret is embedded in, it never comes out.

const ENV = {
  CHAT_API_KEY: 'sk-live-0123456789abcdef',
  SLACK_BOT_TOKEN: 'bot-token-not-a-pattern',
  SLACK_APP_TOKEN: 'app-token-not-a-pattern',
  SLACK_SIGNING_SECRET: 'signing-secret-42',
  SLACK_CLIENT_SECRET: 'client-secret-43',
  SLACK_STATE_SECRET: 'state-secret-44',
  DISCORD_BOT_TOKEN: 'discord-token-45',
  DATABASE_URL: 'postgres://bridge:p%40ss-word-46@db.example:5432/bridge',
};
const VALUES = [
  ENV.CHAT_API_KEY,
  ENV.SLACK_BOT_TOKEN,
  ENV.SLACK_APP_TOKEN,
  ENV.SLACK_SIGNING_SECRET,
  ENV.SLACK_CLIENT_SECRET,
  ENV.SLACK_STATE_SECRET,
  ENV.DISCORD_BOT_TOKEN,
  'p%40ss-word-46',
  'p@ss-word-46',
];

const leaks = (text: string) => VALUES.filter((v) => text.includes(v));

describe('the scrubber', () => {
  it('knows every configured secret, the database password as written and decoded', () => {
    expect(secretValuesOf(ENV).sort()).toEqual([...VALUES].sort());
    expect(urlPasswords('postgres://u@h/db')).toEqual([]);
    expect(urlPasswords('not a url')).toEqual([]);
  });

  it('removes each value wherever it stands, and the patterns too', () => {
    const scrub = createScrubber(secretValuesOf(ENV));
    const text = `key=${ENV.CHAT_API_KEY}; ${JSON.stringify({ t: ENV.DISCORD_BOT_TOKEN })} Bearer abc.def xoxb-1-2-3 ${encodeURIComponent('p@ss-word-46')}`;
    const out = scrub(text);
    expect(leaks(out)).toEqual([]);
    expect(out).toContain('Bearer [redacted]');
    expect(out).not.toContain('xoxb-1-2-3');
  });

  it('ignores values too short to be secrets', () => {
    const scrub = createScrubber(['abc', 'to', undefined]);
    expect(scrub('abc to abc')).toBe('abc to abc');
  });

  it('escaped forms inside JSON go too', () => {
    const scrub = createScrubber(['quote"and\\slash']);
    const line = JSON.stringify({ msg: 'x quote"and\\slash y' });
    const out = scrub(line);
    expect(out).not.toContain('quote');
    expect(JSON.parse(out)).toEqual({ msg: 'x [redacted] y' });
  });
});

describe('forms that got through (issue 39)', () => {
  const key = 'sk-live-Zq81mNwx0Pk37TtR';
  const scrub = createScrubber([key]);
  const hidden = (out: string) => {
    // No 6 characters of the key in a row, in any case.
    const lower = out.toLowerCase();
    for (let i = 0; i + 6 <= key.length; i++) if (lower.includes(key.slice(i, i + 6).toLowerCase())) return false;
    return true;
  };

  it.each([
    ['in hex', Buffer.from(key).toString('hex')],
    ['in uppercase hex', Buffer.from(key).toString('hex').toUpperCase()],
    ['in uppercase', key.toUpperCase()],
    ['in lowercase', key.toLowerCase()],
    ['every byte percent-encoded', Buffer.from(key).toString('hex').replace(/../g, '%$&')],
    ['split by a zero-width space', `${key.slice(0, 9)}\u200b${key.slice(9)}`],
    [
      'split by a zero-width joiner and a soft hyphen',
      `${key.slice(0, 4)}\u200d${key.slice(4, 12)}\u00ad${key.slice(12)}`,
    ],
  ])('a configured secret %s', (_name, form) => {
    const out = scrub(`upstream said: ${form} (end)`);
    expect(out).toContain('[redacted]');
    expect(out).toContain('upstream said:');
    if (!/[0-9A-Fa-f]{20,}/.test(form)) expect(hidden(out)).toBe(true);
    expect(out).not.toContain(form);
  });

  it.each([
    ['glued after a percent-encoded =', 'token%3Dxoxb-1234-5678-abcDEF', 'xoxb-1234'],
    ['glued after an underscore', 'a_xoxb-1234-5678-abcDEF', 'xoxb-1234'],
    ['a refresh token', 'refresh=xoxe-1-My0xLTEyMzQ', 'xoxe-1-My0x'],
    ['an app token glued to a letter', 'tokenxapp-1-A1-123-abcdef', 'xapp-1-A1'],
    ['lowercase bearer', 'authorization: bearer 0pAqUe-t0k3n.value', '0pAqUe'],
    ['BEARER in capitals', 'AUTHORIZATION: BEARER 0pAqUe-t0k3n.value', '0pAqUe'],
    ['bearer URL-encoded', 'authorization=Bearer%200pAqUe-t0k3n', '0pAqUe'],
    ['a Discord token glued to text', `tok_${'MTIzNDU2Nzg5MDEyMzQ1Njc4'}.GabcDE.${'x'.repeat(30)}`, 'GabcDE'],
  ])('a token pattern %s', (_name, text, part) => {
    const out = createScrubber([])(`x ${text} y`);
    expect(out).not.toContain(part);
    expect(out).toContain('redacted');
  });

  it('the token of an OAuth install, once stored or loaded, is scrubbed in encoded forms too', () => {
    const token = 'xoxb-77-88-installed0Secret';
    const b64 = Buffer.from(`user:${token}`).toString('base64');
    const hex = Buffer.from(token).toString('hex');
    expect(scrubSecrets(`basic ${b64} hex ${hex}`)).toContain(hex);
    registerHeldSecrets([token]);
    const out = scrubSecrets(`basic ${b64} hex ${hex}`);
    expect(out).not.toContain(hex);
    expect(out).not.toContain(Buffer.from(token).toString('base64').slice(4, 20));
  });

  it('keeps the MAX_HELD_SECRETS most recent held secrets: the oldest is forgotten, one used again stays', () => {
    const hexOf = (v: string) => Buffer.from(v).toString('hex');
    const first = 'held-first-0123456789';
    const reused = 'held-reused-0123456789';
    registerHeldSecrets([first, reused]);
    for (let i = 0; i < MAX_HELD_SECRETS - 1; i++) {
      registerHeldSecrets([`held-fill-${i}-abcdefgh`]);
      if (i === 100) registerHeldSecrets([reused]); // loaded again: the most recent now
    }
    expect(scrubSecrets(hexOf(first))).toBe(hexOf(first));
    expect(scrubSecrets(hexOf(reused))).toBe('[redacted]');
    expect(scrubSecrets(hexOf(`held-fill-${MAX_HELD_SECRETS - 2}-abcdefgh`))).toBe('[redacted]');
    // Configured values are never forgotten.
    expect(scrubSecrets(ENV.CHAT_API_KEY)).toBe('[redacted]');
  });

  it('finds many held secrets in one pass: a line costs its length, not the number of secrets', () => {
    const many = Array.from({ length: 2000 }, (_, i) => `held-secret-${i.toString(36)}-${'q'.repeat(8)}`);
    registerHeldSecrets(many);
    const out = scrubSecrets(`a ${many[1234]} b ${many[7]} c`);
    expect(out).toBe('a [redacted] b [redacted] c');
  });
});

describe('every output path', () => {
  registerSecrets(secretValuesOf(ENV));

  it('reading the configuration registers the values, even when it is invalid', () => {
    expect(() => parseRawEnv({ CHAT_API_KEY: 'registered-by-config-99', PORT: 'x' })).toThrow();
    expect(scrubSecrets('a registered-by-config-99 b')).toBe('a [redacted] b');
  });

  it('a log line at debug holds none of the values, in the message, fields or errors', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    const log = createLogger({ level: 'debug', destination: sink });
    log.debug({ text: `please use ${ENV.CHAT_API_KEY}` }, `token ${ENV.SLACK_BOT_TOKEN}`);
    log.debug({ nested: { deep: [ENV.SLACK_SIGNING_SECRET, ENV.DISCORD_BOT_TOKEN] } }, 'nested');
    log.error({ err: new Error(`connect to postgres://bridge:p@ss-word-46@db failed`) }, 'db');
    log.info({ url: ENV.DATABASE_URL }, `state ${ENV.SLACK_STATE_SECRET} client ${ENV.SLACK_CLIENT_SECRET}`);
    log.debug(`app ${ENV.SLACK_APP_TOKEN}`);
    await new Promise((r) => setImmediate(r));
    expect(lines).toHaveLength(5);
    for (const l of lines) {
      expect(leaks(l)).toEqual([]);
      expect(() => JSON.parse(l)).not.toThrow();
    }
    expect(lines.join('')).toContain('[redacted]');
  });

  it('a configured secret split across fields of one log line leaves no 12 characters of it', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    const key = ENV.CHAT_API_KEY;
    const half = Math.floor(key.length / 2);
    const third = Math.floor(key.length / 3);
    const log = createLogger({ level: 'debug', destination: sink });
    log.warn({ head: key.slice(0, half), tail: key.slice(half) }, 'halves');
    log.warn({ a: key.slice(0, third), b: key.slice(third, 2 * third), c: key.slice(2 * third) }, 'thirds');
    log.warn({ cut: `${key.slice(0, 20)}…` }, 'a prefix cut by someone else');
    log.warn({ upper: key.slice(3, 30).toUpperCase() }, 'a piece in capitals');
    await new Promise((r) => setImmediate(r));
    expect(lines).toHaveLength(4);
    for (const l of lines) {
      const low = l.toLowerCase();
      for (let i = 0; i + 12 <= key.length; i++) expect(low).not.toContain(key.slice(i, i + 12).toLowerCase());
      expect(() => JSON.parse(l)).not.toThrow();
    }
  });

  it('pieces of a short configured secret are scrubbed down to half its length, ordinary text kept', () => {
    const scrub = createScrubber(['pw-Q7x9Kd2LmZ']);
    expect(scrub('user=pw-Q7x9 pass=Kd2LmZ')).toBe('user=[redacted] pass=[redacted]');
    expect(scrub('the Q7x queue and mZ are not secrets')).toBe('the Q7x queue and mZ are not secrets');
  });

  it('a user notice that quotes an upstream error with the key shows no key', async () => {
    const clock = new ManualClock();
    const conn = new TestConnector({ clock, bucketLimit: 50 });
    const scheduler = new RateLimitScheduler({ clock });
    const upstreamMessage = `A2 stream: upstream answered 400 invalid key ${ENV.CHAT_API_KEY}`;
    await postNotice(conn.sink({ platform: 'test', channelId: 'C1' }), upstreamMessage, scheduler, silentLogger);
    const shown = conn.contentsIn('C1');
    expect(shown).toEqual(['A2 stream: upstream answered 400 invalid key [redacted]']);
  });
});

describe('/metrics', () => {
  it('a label value that holds a configured secret is served scrubbed', async () => {
    const source = {
      contentType: 'text/plain',
      text: async () => `bridge_upstream_errors_total{status="400",code="${ENV.CHAT_API_KEY}"} 1\n`,
    };
    const text = await cachedText(source, 1000, () => 0)();
    expect(text).toBe('bridge_upstream_errors_total{status="400",code="[redacted]"} 1\n');
  });
});

describe('CLI errors', () => {
  it('chat: an upstream error body that quotes configured secrets is printed without them', async () => {
    const server = createServer((req, res) => {
      const cred = String(req.headers.authorization ?? '').replace(/^Bearer\s+/, '');
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: `bad request from ${cred} (discord ${ENV.DISCORD_BOT_TOKEN})` }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      let stderr = '';
      const code = await chat([], {
        stdin: Readable.from(['hello\n']),
        stdout: new Writable({ write: (_c, _e, cb) => cb() }),
        stderr: { write: (s: string) => (stderr += s) },
        env: {
          CHAT_API_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          CHAT_API_KEY: ENV.CHAT_API_KEY,
          CHAT_BOT_ID: 'demo-bot',
          DISCORD_BOT_TOKEN: ENV.DISCORD_BOT_TOKEN,
        },
      });
      expect(code).toBe(1);
      expect(stderr).toContain('bad request from [redacted] (discord [redacted])');
      expect(leaks(stderr)).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('the encoded forms of a secret', () => {
  const SECRET = 'sk-Live/0123+456789&<key>"x\'';
  const scrub = createScrubber([SECRET]);
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

  it.each([
    ['as is', SECRET],
    ['JSON-escaped', JSON.stringify(SECRET).slice(1, -1)],
    ['percent-encoded, uppercase hex', encodeURIComponent(SECRET)],
    ['percent-encoded, lowercase hex', encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())],
    [
      'HTML-escaped',
      SECRET.replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;')
        .replace(/"/g, '&quot;')
        .replace(/'/g, '&#39;'),
    ],
    [
      'HTML-escaped, numeric',
      SECRET.replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;')
        .replace(/"/g, '&#34;')
        .replace(/'/g, '&#x27;'),
    ],
    ['base64', b64(SECRET)],
    ['base64 without padding', b64(SECRET).replace(/=+$/, '')],
    ['base64url', b64(SECRET).replace(/\+/g, '-').replace(/\//g, '_')],
  ])('%s: not in the output', (_name, form) => {
    const out = scrub(`upstream said: <pre>${form}</pre> (end)`);
    expect(out).toContain('[redacted]');
    expect(out).not.toContain(form);
    expect(out).toMatch(/^upstream said: <pre>.*<\/pre> \(end\)$/);
  });

  it.each(['u', 'us', 'use', 'user:'])('base64 of the secret after other text (%j): the secret part goes', (prefix) => {
    const encoded = b64(`${prefix}${SECRET}`);
    const out = scrub(`Authorization: Basic ${encoded}`);
    expect(out).toContain('[redacted]');
    // What is left cannot be decoded back to the secret, nor to most of it.
    const left = out.split('[redacted]').join('');
    expect(Buffer.from(left.replace(/^Authorization: Basic /, ''), 'base64').toString('utf8')).not.toContain(
      SECRET.slice(0, 12),
    );
  });

  it('the process-wide scrubber catches the forms of a configured value too', () => {
    const value = 'configured/secret+value:77';
    registerSecrets([value]);
    const lower = encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
    for (const form of [b64(value), lower, value, value.replace(/:/g, '&#58;').replace('&#58;', ':')])
      expect(scrubSecrets(`x ${form} y`)).toBe('x [redacted] y');
  });

  it('ordinary text is left alone, and a prefix shorter than a piece (MIN_PIECE_CHARS)', () => {
    expect(scrub('nothing secret here: sk-Live/01 only a prefix')).toBe(
      'nothing secret here: sk-Live/01 only a prefix',
    );
  });
});
