import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { parseRawEnv } from '../../config/config.js';
import { configForStart, playgroundPlan } from '../../config/start-config.js';
import type { ReplyView } from './connector.js';
import { ConversationTable } from './conversation-table.js';
import { createGuard, hostOf, sameOrigin, userIdOf } from './guard.js';
import { createStreams } from './streams.js';

// The guard's rules one by one (the HTTP-level tests are test/integration/playground-guard.test.ts),
// the streams' idle end on a manual clock, and the conversations' bound.

/** A PLAYGROUND_TOKEN strong enough (openssl rand -hex 16). */
const TOKEN = '3f9c1a7be04d52e8a61b9c0d7e2f4a58';

const req = (remoteAddress: string, headers: Record<string, string>, url = '/'): IncomingMessage =>
  ({ socket: { remoteAddress }, headers, url, method: 'GET' }) as unknown as IncomingMessage;

describe('Host, address and Origin', () => {
  it("answers this machine's clients only, unless opened", () => {
    const g = createGuard({ allowRemote: false, addresses: () => ['127.0.0.1', '192.168.7.9', 'fe80::1%eth0'] });
    const host = { host: 'localhost:3000' };
    expect(g.admit(req('10.0.0.5', host))).toMatchObject({ refused: 'not_this_machine' });
    expect(g.admit(req('::ffff:10.0.0.5', host))).toMatchObject({ refused: 'not_this_machine' });
    for (const a of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '192.168.7.9', 'fe80::1'])
      expect(g.admit(req(a, host))).toHaveProperty('caller');
    // Its own addresses are its names too; anything else is a rebinding name.
    expect(g.admit(req('127.0.0.1', { host: '192.168.7.9:3000' }))).toHaveProperty('caller');
    expect(g.admit(req('127.0.0.1', { host: '[fe80::1]:3000' }))).toHaveProperty('caller');
    expect(g.admit(req('127.0.0.1', { host: 'app.localhost:3000' }))).toHaveProperty('caller');
    for (const bad of ['attacker.example', 'localhost.attacker.example', '10.0.0.5:3000', '', 'a b', 'x@localhost'])
      expect(g.admit(req('127.0.0.1', { host: bad }))).toMatchObject({ refused: 'bad_host' });
    expect(g.admit(req('127.0.0.1', {}))).toMatchObject({ refused: 'bad_host' });
  });

  it('opened: any address, with the credential; a public host name is taken', () => {
    const g = createGuard({
      allowRemote: true,
      token: TOKEN,
      publicHosts: ['bridge.example'],
      addresses: () => [],
    });
    expect(g.admit(req('10.0.0.5', { host: 'bridge.example' }))).toMatchObject({ refused: 'unauthenticated' });
    const ok = g.admit(req('10.0.0.5', { host: 'bridge.example', authorization: `Bearer ${TOKEN}` }));
    expect(ok).toMatchObject({ caller: { uid: undefined, bearer: true, address: '10.0.0.5', secure: false } });
    expect(g.admit(req('10.0.0.5', { host: 'other.example', authorization: `Bearer ${TOKEN}` }))).toMatchObject({
      refused: 'bad_host',
    });
    expect(g.tokenParam(TOKEN, '10.0.0.5')).toBe('right');
    expect(g.tokenParam(TOKEN.slice(1), '10.0.0.5')).toBe('wrong');
    expect(g.tokenParam(null, '10.0.0.5')).toBe('none');
    const cookie = g.authCookies({ secure: false, https: false })[0]?.split(';')[0] ?? '';
    expect(cookie).toMatch(/^playground_auth=/);
    expect(g.admit(req('10.0.0.5', { host: 'bridge.example', cookie }))).toHaveProperty('caller.bearer', false);
  });

  it('a write must come from the origin of the Host it was sent to', () => {
    expect(sameOrigin('http://localhost:3000', 'localhost:3000')).toBe(true);
    expect(sameOrigin('http://127.0.0.1', '127.0.0.1:80')).toBe(true);
    expect(sameOrigin('https://bridge.example', 'bridge.example')).toBe(true); // behind a TLS proxy
    expect(sameOrigin('http://[::1]:3000', '[::1]:3000')).toBe(true);
    for (const [o, h] of [
      ['http://localhost:3001', 'localhost:3000'],
      ['http://127.0.0.1:3000', 'localhost:3000'],
      ['null', 'localhost:3000'],
      ['http://localhost:3000/x', 'localhost:3000'],
      ['file://', 'localhost:3000'],
      ['http://localhost:3000', 'attacker.example:3000'],
    ] as const)
      expect(sameOrigin(o, h)).toBe(false);
    expect(sameOrigin(undefined, 'localhost:3000')).toBe(false);
    expect(hostOf('LocalHost.:3000')).toEqual({ name: 'localhost', port: '3000' });
  });

  it('the page token belongs to one browser and one process; the user id never shows the cookie', () => {
    const g = createGuard({ allowRemote: false, addresses: () => [] });
    expect(g.tokenParam('anything', '127.0.0.1')).toBe('none'); // no PLAYGROUND_TOKEN: nothing to present
    const { uid, cookies } = g.newUid({ secure: true, https: false });
    expect(cookies).toEqual([
      `__Host-playground_uid=${uid}; Path=/; Max-Age=34560000; HttpOnly; SameSite=Strict; Secure`,
      `playground_uid=${uid}; Path=/; Max-Age=34560000; HttpOnly; SameSite=Strict`,
    ]);
    const good = { host: 'localhost:1', origin: 'http://localhost:1', 'content-type': 'application/json' };
    const caller = { uid, uids: [uid], bearer: false, address: '127.0.0.1', secure: true, https: false };
    expect(g.api(req('127.0.0.1', { ...good, 'x-playground-token': g.pageToken(uid) }), caller, true)).toBeUndefined();
    const other = createGuard({ allowRemote: false, addresses: () => [] });
    expect(g.api(req('127.0.0.1', { ...good, 'x-playground-token': other.pageToken(uid) }), caller, true)).toBe(
      'bad_page_token',
    );
    expect(
      g.api(
        req('127.0.0.1', {
          ...good,
          'content-type': 'application/json; charset=utf-8',
          'x-playground-token': g.pageToken(uid),
        }),
        caller,
        true,
      ),
    ).toBeUndefined();
    expect(userIdOf(caller)).toMatch(/^playground-[A-Za-z0-9_-]{16}$/);
    expect(userIdOf(caller)).not.toContain(uid);
  });
});

describe('PLAYGROUND=on needs PLAYGROUND_TOKEN', () => {
  const env = { CHAT_API_URL: 'http://127.0.0.1:9', CHAT_API_KEY: 'k', CHAT_BOT_ID: 'b', PLAYGROUND: 'on' };
  it('refuses to start without one, or with a short one, naming the variable and the way out', () => {
    expect(() => configForStart(parseRawEnv(env))).toThrow(/PLAYGROUND=on .* set PLAYGROUND_TOKEN/);
    expect(() => configForStart(parseRawEnv({ ...env, PLAYGROUND_TOKEN: 'short' }))).toThrow(
      /PLAYGROUND_TOKEN: too weak \(it has 5 characters\): use at least 20 characters/,
    );
    const { playground } = configForStart(parseRawEnv({ ...env, PLAYGROUND_TOKEN: TOKEN }));
    expect(playground).toMatchObject({ enabled: true, allowRemote: true, token: TOKEN });
  });
  it('on this machine it needs nothing', () => {
    expect(() => configForStart(parseRawEnv({}))).not.toThrow();
    expect(playgroundPlan(parseRawEnv({ PLAYGROUND_PUBLIC_HOST: 'A.example, b.example' })).publicHosts).toEqual([
      'a.example',
      'b.example',
    ]);
  });
});

describe('event streams end when idle', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

  it('a stream with no reply and no request of its browser ends with `event: idle`; activity keeps it', async () => {
    const clock = new ManualClock();
    const streams = createStreams({ perUser: 2, perAddress: 4, total: 4, idleMs: 60_000, keepaliveMs: 15_000 }, clock);
    let push: ((event: string, data: unknown) => void) | undefined;
    server = createServer((_req, res) => {
      streams.open('u1', '127.0.0.1', res, (send) => {
        push = send;
        return () => {};
      });
    });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    let text = '';
    const ended = new Promise<void>((resolve) => {
      request({ host: '127.0.0.1', port, path: '/' }, (res) => {
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve());
      }).end();
    });
    const until = async (cond: () => boolean) => {
      for (let i = 0; i < 1000 && !cond(); i++) await clock.settle();
      expect(cond()).toBe(true);
    };
    await until(() => streams.size === 1 && text.includes(': playground'));
    await clock.advance(45_000);
    push?.('reply', { n: 1 }); // a reply: active again
    await clock.advance(45_000);
    streams.touch('u1'); // a request of its browser: active again
    await clock.advance(45_000);
    expect(streams.size).toBe(1);
    await clock.advance(30_000);
    await ended;
    expect(streams.size).toBe(0);
    expect(text).toContain(': keepalive');
    expect(text).toContain('event: reply\ndata: {"n":1}');
    expect(text.trimEnd().endsWith('event: idle\ndata: {"idleMs":60000}')).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('conversations in memory', () => {
  const view = (state: ReplyView['state']): ReplyView => ({
    id: 'r',
    conversation: 'c',
    text: '',
    state,
    feedback: false,
    writes: 1,
  });

  it('are claimed by their first browser, and the least recently used idle one is forgotten first', () => {
    const t = new ConversationTable(3);
    expect(t.claim('a', 'u1')).toBe('ok');
    expect(t.claim('a', 'u2')).toBe('not_yours');
    expect(t.claim('b', 'u1')).toBe('ok');
    expect(t.claim('c', 'u1')).toBe('ok');
    t.get('a'); // used: b is now the least recently used
    expect(t.claim('d', 'u2')).toBe('ok');
    expect(t.size).toBe(3);
    expect(t.get('b')).toBeUndefined();
    expect(t.get('a')).toBeDefined();
  });

  it('never forgets one that is followed, answering or streaming: then a new one is refused', () => {
    const t = new ConversationTable(3);
    for (const id of ['a', 'b', 'c']) t.claim(id, 'u1');
    t.ensure('a').listeners.add(() => {});
    t.ensure('b').busy = 1;
    t.ensure('c').replies.push(view('streaming'));
    expect(t.claim('d', 'u1')).toBe('full');
    (t.get('c')?.replies[0] as ReplyView).state = 'final';
    expect(t.claim('d', 'u1')).toBe('ok');
    expect(t.get('c')).toBeUndefined();
  });
});

describe('issue 39: the credential and the cookies', () => {
  it('a weak PLAYGROUND_TOKEN is refused, saying how strong one must be', () => {
    const env = { CHAT_API_URL: 'http://127.0.0.1:9', CHAT_API_KEY: 'k', CHAT_BOT_ID: 'b', PLAYGROUND: 'on' };
    for (const [weak, why] of [
      ['a'.repeat(16), /it has 16 characters/],
      ['a'.repeat(40), /only 1 different characters/],
      ['abcdefghijabcdefghij', /one short piece repeated/],
      ['0123456789'.repeat(3), /one short piece repeated/],
      ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaabcdefghij', /estimated strength is \d+ bits/],
    ] as const) {
      expect(() => configForStart(parseRawEnv({ ...env, PLAYGROUND_TOKEN: weak }))).toThrow(why);
      expect(() => configForStart(parseRawEnv({ ...env, PLAYGROUND_TOKEN: weak }))).toThrow(
        /PLAYGROUND_TOKEN: too weak .*at least 20 characters, at least 10 of them different/,
      );
    }
    expect(() => configForStart(parseRawEnv({ ...env, PLAYGROUND_TOKEN: TOKEN }))).not.toThrow();
    expect(() =>
      configForStart(parseRawEnv({ ...env, PLAYGROUND_TOKEN: 'correct horse battery staple' })),
    ).not.toThrow();
  });

  it('wrong guesses are slowed per address: past 5 a minute, even the right token waits', () => {
    let now = 1_000_000;
    const g = createGuard({ allowRemote: true, token: TOKEN, addresses: () => [], now: () => now });
    const bearer = (a: string, t: string) => g.admit(req(a, { host: 'localhost:1', authorization: `Bearer ${t}` }));
    for (let i = 0; i < 5; i++) expect(bearer('10.0.0.5', `guess-${i}`)).toMatchObject({ refused: 'wrong_token' });
    expect(bearer('10.0.0.5', TOKEN)).toMatchObject({ refused: 'too_many_guesses', retryAfterS: 60 });
    expect(g.tokenParam(TOKEN, '10.0.0.5')).toEqual({ retryAfterS: 60 });
    // Another address is not slowed by this one.
    expect(bearer('10.0.0.6', TOKEN)).toHaveProperty('caller.bearer', true);
    now += 60_001;
    expect(bearer('10.0.0.5', TOKEN)).toHaveProperty('caller.bearer', true);
  });

  it('past the total of wrong guesses, an address that guessed wrong waits; one that never did is not locked out', () => {
    const g = createGuard({
      allowRemote: true,
      token: TOKEN,
      addresses: () => [],
      guessLimits: { perAddress: 5, total: 3, windowMs: 60_000, remembered: 100 },
    });
    const bearer = (a: string, t: string) => g.admit(req(a, { host: 'localhost:1', authorization: `Bearer ${t}` }));
    for (const a of ['10.0.0.1', '10.0.0.2', '10.0.0.3'])
      expect(bearer(a, 'wrong')).toMatchObject({ refused: 'wrong_token' });
    expect(bearer('10.0.0.1', TOKEN)).toMatchObject({ refused: 'too_many_guesses' });
    expect(bearer('10.0.0.9', TOKEN)).toHaveProperty('caller.bearer', true);
    expect(bearer('10.0.0.9', TOKEN)).toHaveProperty('caller.bearer', true);
  });

  it('the credential cookie is per process, Secure and __Host- where it can be, and lasts a working day', () => {
    const a = createGuard({ allowRemote: true, token: TOKEN, addresses: () => [] });
    const b = createGuard({ allowRemote: true, token: TOKEN, addresses: () => [] });
    const https = a.authCookies({ secure: true, https: true });
    expect(https).toHaveLength(1);
    expect(https[0]).toMatch(
      /^__Host-playground_auth=[^;]+; Path=\/; Max-Age=36000; HttpOnly; SameSite=Strict; Secure$/,
    );
    expect(b.authCookies({ secure: true, https: true })[0]).not.toBe(https[0]);
    // The cookie of one process does not open another (a restart asks for the token again).
    const cookie = https[0]?.split(';')[0] ?? '';
    expect(a.admit(req('10.0.0.5', { host: 'localhost:1', cookie }))).toHaveProperty('caller');
    expect(b.admit(req('10.0.0.5', { host: 'localhost:1', cookie }))).toMatchObject({ refused: 'unauthenticated' });
  });

  it('HTTPS and the client address are taken from a proxy TRUST_PROXY names, never from anyone else', () => {
    const trusted = createGuard({
      allowRemote: true,
      token: TOKEN,
      addresses: () => [],
      publicHosts: ['bridge.example'],
      trustProxy: { ranges: [{ address: '10.0.0.1', prefix: 32, family: 4 }] },
    });
    const auth = { host: 'bridge.example', authorization: `Bearer ${TOKEN}` };
    const fwd = { ...auth, 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https' };
    expect(trusted.admit(req('10.0.0.1', fwd))).toMatchObject({
      caller: { address: '203.0.113.7', https: true, secure: true },
    });
    expect(trusted.admit(req('10.0.0.9', fwd))).toMatchObject({
      caller: { address: '10.0.0.9', https: false, secure: false },
    });
    const plain = createGuard({
      allowRemote: true,
      token: TOKEN,
      addresses: () => [],
      publicHosts: ['bridge.example'],
    });
    expect(plain.admit(req('10.0.0.1', fwd))).toMatchObject({ caller: { address: '10.0.0.1', https: false } });
    expect(plain.admit(req('2001:db8:1:2:3:4:5:6', auth))).toMatchObject({ caller: { address: '2001:db8:1:2::/64' } });
  });

  it('a cookie tossed from another port (same name, narrower path, sent first) does not take the id', () => {
    const g = createGuard({ allowRemote: false, addresses: () => ['192.168.7.9'] });
    const mine = g.newUid({ secure: false, https: false }).uid;
    const tossed = 'A'.repeat(22);
    const cookie = `playground_uid=${tossed}; playground_uid=${mine}`;
    const page = g.admit(req('127.0.0.1', { host: '192.168.7.9:1', cookie }));
    // Over plain http (no __Host-), the page's id is the last of the name: ours has the shortest path.
    expect(page).toMatchObject({ caller: { uid: mine, uids: [tossed, mine] } });
    const caller = 'caller' in page ? page.caller : undefined;
    if (caller === undefined) throw new Error('refused');
    const write = { host: 'localhost:1', origin: 'http://localhost:1', 'content-type': 'application/json' };
    expect(
      g.api(req('127.0.0.1', { ...write, 'x-playground-token': g.pageToken(mine) }), caller, true),
    ).toBeUndefined();
    expect(caller.uid).toBe(mine);
    // A __Host- id wins over plain ones on a loopback name.
    const host = g.admit(req('127.0.0.1', { host: 'localhost:1', cookie: `${cookie}; __Host-playground_uid=${mine}` }));
    expect(host).toMatchObject({ caller: { uid: mine, secure: true } });
  });
});
