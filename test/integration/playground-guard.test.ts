import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../src/core/user-messages.js';
import {
  call,
  conversationEvents,
  openEvents,
  openPage,
  pageHeaders,
  type PlaygroundWorld,
  playgroundPerBlock,
  post,
  type Session,
  startPlayground,
} from './playground-http.js';

// Only the playground's own page drives it (issue 29), at the HTTP level: every rule refuses with
// 403 (401 without the credential when opened), and a refused request reaches nothing: the
// upstream receives no message. The real page's requests still work.

const reply = (e: { event: string; data: unknown }) => e.data as { state: string; text: string; notice?: boolean };

describe('the playground on this machine (PLAYGROUND unset)', () => {
  const pg = playgroundPerBlock({ allowRemote: false }, { USER_MESSAGES_PER_MINUTE: '3' });

  const events = (conversation: string, session: Session = pg.s) =>
    conversationEvents(pg.w.port, session, conversation);

  it('the page sets an HttpOnly SameSite=Strict id cookie and carries its token in a meta tag', async () => {
    const page = await call(pg.w.port, 'GET', '/', { host: `localhost:${pg.w.port}` });
    expect(page.status).toBe(200);
    const cookie = [page.headers['set-cookie'] ?? []].flat().join('\n');
    expect(cookie).toMatch(/playground_uid=[A-Za-z0-9_-]{22}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict/);
    expect(page.body).toMatch(/<meta name="playground-token" content="[A-Za-z0-9_-]{43}">\n<\/head>/);
    // A browser that has its cookie keeps its id: no new one is set.
    const again = await call(pg.w.port, 'GET', '/', { host: pg.s.host, cookie: pg.s.cookie });
    expect(again.headers['set-cookie']).toBeUndefined();
    expect(again.body).toContain(`content="${pg.s.token}"`);
    // GET /playground is the page too.
    expect((await call(pg.w.port, 'GET', '/playground', { host: pg.s.host, cookie: pg.s.cookie })).body).toContain(
      pg.s.token,
    );
  });

  it("the real page's requests work: a message reaches the upstream and its reply streams back", async () => {
    const stream = await events('realpage');
    expect(stream.status).toBe(200);
    const sent = await post(pg.w.port, 'send', pageHeaders(pg.s), { conversation: 'realpage', text: 'hello there' });
    expect(sent.status).toBe(202);
    const last = await stream.next((e) => e.event === 'reply' && reply(e).state !== 'streaming');
    expect(reply(last)).toMatchObject({ state: 'final', text: 'You said: hello there' });
    expect(pg.w.upstreamMessages()).toContain('hello there');
    const history = await call(pg.w.port, 'GET', '/playground/api/history?conversation=realpage', {
      host: pg.s.host,
      cookie: pg.s.cookie,
      'x-playground-token': pg.s.token,
    });
    expect(history.status).toBe(200);
    expect(JSON.parse(history.body).messages).toHaveLength(2);
    stream.close();
  });

  it('DNS rebinding (Host: attacker.example): 403 for the page, the API, history and events', async () => {
    const before = pg.w.upstreamMessages().length;
    for (const host of ['attacker.example', `attacker.example:${pg.w.port}`, 'localhost.attacker.example', '0.0.0.0']) {
      const h = { ...pageHeaders(pg.s), host, origin: `http://${host}` };
      expect((await call(pg.w.port, 'GET', '/', { host, cookie: pg.s.cookie })).status).toBe(403);
      expect((await call(pg.w.port, 'GET', '/playground/app.js', { host })).status).toBe(403);
      expect((await call(pg.w.port, 'GET', '/playground/api/history?conversation=realpage', h)).status).toBe(403);
      const ev = await openEvents(pg.w.port, `/playground/events?conversation=realpage&page_token=${pg.s.token}`, h);
      expect(ev.status).toBe(403);
      const sent = await post(pg.w.port, 'send', h, { conversation: 'rebound', text: 'spend the key' });
      expect(sent.status).toBe(403);
      expect(JSON.parse(sent.body)).toMatchObject({ error: 'forbidden', reason: 'bad_host' });
    }
    expect(pg.w.upstreamMessages().length).toBe(before);
  });

  it('arriving from another site without the id cookie: the page loads itself again, and sets no new id', async () => {
    const page = await call(pg.w.port, 'GET', '/#x', { host: pg.s.host, 'sec-fetch-site': 'cross-site' });
    expect(page.status).toBe(200);
    expect(page.headers['set-cookie']).toBeUndefined();
    expect(page.body).toContain('http-equiv="refresh" content="0;url=/"');
    expect(page.body).not.toContain('playground-token');
  });

  it('this machine by any of its names: localhost, 127.0.0.1, [::1]', async () => {
    for (const host of [
      `localhost:${pg.w.port}`,
      `127.0.0.1:${pg.w.port}`,
      `[::1]:${pg.w.port}`,
      `LOCALHOST:${pg.w.port}`,
    ]) {
      expect((await call(pg.w.port, 'GET', '/', { host, cookie: pg.s.cookie })).status).toBe(200);
    }
  });

  it('a write without the Origin of the page, JSON, its token or its cookie: 403 and nothing happens', async () => {
    const before = pg.w.upstreamMessages().length;
    const good = pageHeaders(pg.s);
    const { origin: _o, ...noOrigin } = good;
    const { 'x-playground-token': _t, ...noToken } = good;
    const { cookie: _c, ...noCookie } = good;
    const other = await openPage(pg.w.port);
    const cases: [string, Record<string, string>, string][] = [
      ['another origin (another port of this machine)', { ...good, origin: 'http://127.0.0.1:1' }, 'bad_origin'],
      [
        'another origin (localhost, another port)',
        { ...good, origin: `http://localhost:${pg.w.port + 1}` },
        'bad_origin',
      ],
      ['an https origin on another name', { ...good, origin: `https://attacker.example` }, 'bad_origin'],
      ['Origin: null (a sandboxed frame, a file)', { ...good, origin: 'null' }, 'bad_origin'],
      ['no Origin at all', noOrigin, 'bad_origin'],
      ['a form (text/plain)', { ...good, 'content-type': 'text/plain' }, 'bad_content_type'],
      ['a form (urlencoded)', { ...good, 'content-type': 'application/x-www-form-urlencoded' }, 'bad_content_type'],
      ['no token', noToken, 'bad_page_token'],
      ['a wrong token', { ...good, 'x-playground-token': 'x'.repeat(43) }, 'bad_page_token'],
      ["another browser's token", { ...good, 'x-playground-token': other.token }, 'bad_page_token'],
      ['no id cookie', noCookie, 'no_session'],
    ];
    for (const [what, headers, reason] of cases) {
      for (const [path, body] of [
        ['send', { conversation: 'victim', text: `spend the key: ${what}` }],
        ['reset', { conversation: 'realpage' }],
        ['stop', { replyKey: 'k' }],
        ['vote', { replyKey: 'k', vote: 'down' }],
      ] as const) {
        const r = await post(pg.w.port, path, headers, body);
        expect({ what, path, status: r.status, reason: JSON.parse(r.body).reason }).toEqual({
          what,
          path,
          status: 403,
          reason,
        });
        expect(r.headers['access-control-allow-origin']).toBeUndefined();
      }
    }
    // The page token is taken in the query only on reads: a write with it there is still refused.
    const q = await call(
      pg.w.port,
      'POST',
      `/playground/api/send?page_token=${pg.s.token}`,
      noToken,
      JSON.stringify({ conversation: 'victim', text: 'via the query' }),
    );
    expect(q.status).toBe(403);
    expect(pg.w.upstreamMessages().length).toBe(before);
    // realpage was not reset by any of them: its history is still there.
    const history = await call(
      pg.w.port,
      'GET',
      `/playground/api/history?conversation=realpage&page_token=${pg.s.token}`,
      {
        host: pg.s.host,
        cookie: pg.s.cookie,
      },
    );
    expect(JSON.parse(history.body).messages.length).toBeGreaterThan(0);
  });

  it('reads need the token too; a preflight gets no CORS header; other methods are refused', async () => {
    const noToken = await call(pg.w.port, 'GET', '/playground/api/history?conversation=realpage', {
      host: pg.s.host,
      cookie: pg.s.cookie,
    });
    expect(noToken.status).toBe(403);
    const ev = await openEvents(pg.w.port, '/playground/events?conversation=realpage', {
      host: pg.s.host,
      cookie: pg.s.cookie,
    });
    expect(ev.status).toBe(403);
    const pre = await call(pg.w.port, 'OPTIONS', '/playground/api/send', {
      host: pg.s.host,
      origin: 'http://127.0.0.1:1',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type, x-playground-token',
    });
    expect(pre.status).toBe(405);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    expect((await call(pg.w.port, 'PUT', '/playground/api/send', pageHeaders(pg.s), '{}')).status).toBe(405);
  });

  it('each browser is its own user: another browser cannot read, follow, send to or reset a conversation', async () => {
    const mine = await events('mineonly');
    expect(
      (await post(pg.w.port, 'send', pageHeaders(pg.s), { conversation: 'mineonly', text: 'private' })).status,
    ).toBe(202);
    await mine.next((e) => reply(e).state === 'final');
    const other = await openPage(pg.w.port);
    expect(other.cookie).not.toBe(pg.s.cookie);
    const before = pg.w.upstreamMessages().length;
    const refused = [
      await post(pg.w.port, 'send', pageHeaders(other), { conversation: 'mineonly', text: 'intrude' }),
      await post(pg.w.port, 'reset', pageHeaders(other), { conversation: 'mineonly' }),
      await call(pg.w.port, 'GET', `/playground/api/history?conversation=mineonly&page_token=${other.token}`, {
        host: other.host,
        cookie: other.cookie,
      }),
      await openEvents(pg.w.port, `/playground/events?conversation=mineonly&page_token=${other.token}`, {
        host: other.host,
        cookie: other.cookie,
      }),
    ];
    for (const r of refused) expect(r.status).toBe(403);
    expect(pg.w.upstreamMessages().length).toBe(before);
    mine.close();
  });

  it('every refusal reaches the page that was refused (slow down), and only that browser is limited', async () => {
    // USER_MESSAGES_PER_MINUTE=3: this browser has used some already; a fresh one gets 3.
    const a = await openPage(pg.w.port);
    const b = await openPage(pg.w.port);
    const stream = await events('floodone', a);
    const notices: string[] = [];
    for (let i = 0; i < 6; i++) {
      expect((await post(pg.w.port, 'send', pageHeaders(a), { conversation: 'floodone', text: `m${i}` })).status).toBe(
        202,
      );
    }
    // Messages 4, 5 and 6 are refused: each one's notice reaches the stream (not only the first).
    for (let i = 0; i < 3; i++) {
      const e = await stream.next((x) => reply(x).notice === true && !notices.includes(JSON.stringify(x.data)));
      notices.push(JSON.stringify(e.data));
      expect(reply(e).text).toBe(MESSAGES.slowDown);
    }
    // The other browser is not slowed down by it.
    const sb = await events('floodtwo', b);
    expect((await post(pg.w.port, 'send', pageHeaders(b), { conversation: 'floodtwo', text: 'calm' })).status).toBe(
      202,
    );
    expect(reply(await sb.next((e) => reply(e).state === 'final'))).toMatchObject({ text: 'You said: calm' });
    expect(sb.events.some((e) => reply(e).notice === true)).toBe(false);
    stream.close();
    sb.close();
  });
});

describe('opened to other machines (PLAYGROUND=on): PLAYGROUND_TOKEN or nothing', () => {
  const TOKEN = 'a-long-enough-playground-token';
  let w: PlaygroundWorld;
  beforeAll(async () => {
    w = await startPlayground({ allowRemote: true, token: TOKEN, publicHosts: ['bridge.example.test'] });
  }, 60_000);
  afterAll(() => w?.close());

  it('without the credential: 401 for the page and the API, and nothing reaches the upstream', async () => {
    const host = `127.0.0.1:${w.port}`;
    const page = await call(w.port, 'GET', '/', { host });
    expect(page.status).toBe(401);
    expect(page.headers['set-cookie']).toBeUndefined();
    expect(page.body).toContain('/playground?token=');
    expect((await call(w.port, 'GET', '/playground/app.js', { host })).status).toBe(401);
    const sent = await post(
      w.port,
      'send',
      { host, origin: `http://${host}`, 'content-type': 'application/json' },
      { conversation: 'open', text: 'free key' },
    );
    expect(sent.status).toBe(401);
    expect(sent.headers['www-authenticate']).toContain('Bearer');
    expect((await call(w.port, 'GET', '/?token=wrong-token-of-some-length', { host })).status).toBe(403);
    expect((await call(w.port, 'GET', '/', { host, authorization: 'Bearer wrong-token-of-some-length' })).status).toBe(
      401,
    );
    expect(w.upstreamMessages()).toEqual([]);
  });

  it('/playground?token=… once sets the credential cookie and leaves the address bar; then the page works', async () => {
    const host = `bridge.example.test:${w.port}`;
    const first = await call(w.port, 'GET', `/playground?token=${TOKEN}`, { host });
    expect(first.status).toBe(200);
    const set = [first.headers['set-cookie'] ?? []].flat().join('\n');
    expect(set).toMatch(/playground_auth=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict/);
    expect(set).not.toContain(TOKEN);
    expect(first.body).toContain('http-equiv="refresh" content="0;url=/"');
    const auth = /playground_auth=([^;]+)/.exec(set)?.[0] ?? '';
    const page = await call(w.port, 'GET', '/', { host, cookie: auth });
    expect(page.status).toBe(200);
    const uid = /playground_uid=[^;]+/.exec([page.headers['set-cookie'] ?? []].flat().join('\n'))?.[0] ?? '';
    const token = /name="playground-token" content="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const headers = {
      host,
      origin: `http://${host}`,
      cookie: `${auth}; ${uid}`,
      'content-type': 'application/json',
      'x-playground-token': token,
    };
    const stream = await openEvents(w.port, `/playground/events?conversation=opened&page_token=${token}`, headers);
    expect((await post(w.port, 'send', headers, { conversation: 'opened', text: 'from afar' })).status).toBe(202);
    expect(reply(await stream.next((e) => reply(e).state === 'final')).text).toBe('You said: from afar');
    stream.close();
    // The credential alone does not make a write: the page's own rules still hold.
    const { 'x-playground-token': _t, ...noToken } = headers;
    expect((await post(w.port, 'send', noToken, { conversation: 'opened', text: 'x' })).status).toBe(403);
    expect(
      (await post(w.port, 'send', { ...headers, origin: 'http://evil.test' }, { conversation: 'opened', text: 'x' }))
        .status,
    ).toBe(403);
  });

  it('a script with Authorization: Bearer needs no page, Origin or page token (browsers never send one by themselves)', async () => {
    const host = `127.0.0.1:${w.port}`;
    const bearer = { host, authorization: `Bearer ${TOKEN}` };
    const stream = await openEvents(w.port, '/playground/events?conversation=scripted', bearer);
    expect(stream.status).toBe(200);
    const sent = await post(
      w.port,
      'send',
      { ...bearer, 'content-type': 'application/json' },
      {
        conversation: 'scripted',
        text: 'by script',
      },
    );
    expect(sent.status).toBe(202);
    expect(reply(await stream.next((e) => reply(e).state === 'final')).text).toBe('You said: by script');
    // Still JSON only, and still this machine's names only.
    expect(
      (await post(w.port, 'send', { ...bearer, 'content-type': 'text/plain' }, { conversation: 'scripted', text: 'x' }))
        .status,
    ).toBe(403);
    expect(
      (
        await post(
          w.port,
          'send',
          { ...bearer, host: 'evil.test', 'content-type': 'application/json' },
          { conversation: 'scripted', text: 'x' },
        )
      ).status,
    ).toBe(403);
    stream.close();
  });
});

describe('bounded: event streams and conversations', () => {
  let w: PlaygroundWorld;
  beforeAll(async () => {
    w = await startPlayground({
      allowRemote: false,
      limits: { streamsPerBrowser: 2, streams: 5, conversations: 4, streamIdleMs: 60_000, keepaliveMs: 60_000 },
    });
  }, 60_000);
  afterAll(() => w?.close());

  const follow = (s: Session, conversation: string) =>
    openEvents(w.port, `/playground/events?conversation=${conversation}&page_token=${s.token}`, {
      host: s.host,
      cookie: s.cookie,
    });

  it('per browser 429, in all 503, each with a JSON reason; /healthz and the page still answer; a closed stream frees its place', async () => {
    const a = await openPage(w.port);
    const open = [await follow(a, 'c1'), await follow(a, 'c1')];
    const third = await follow(a, 'c2');
    expect(third.status).toBe(429);
    expect(JSON.parse(third.body)).toMatchObject({ error: 'too_many_streams' });
    const b = await openPage(w.port);
    const c = await openPage(w.port);
    open.push(await follow(b, 'c3'), await follow(b, 'c3'), await follow(c, 'c4'));
    for (const s of open) expect(s.status).toBe(200);
    const over = await follow(c, 'c4');
    expect(over.status).toBe(503);
    expect(JSON.parse(over.body)).toMatchObject({ error: 'playground_busy' });
    expect(over.headers['retry-after']).toBe('60');
    // The port's other routes are not held by the playground's streams.
    const health = await call(w.port, 'GET', '/healthz', { host: 'anything.example' });
    expect(health.status).toBe(200);
    expect((await call(w.port, 'GET', '/', { host: a.host, cookie: a.cookie })).status).toBe(200);
    // A browser at its cap may still send (and is told its reply through a stream it holds).
    expect((await post(w.port, 'send', pageHeaders(a), { conversation: 'c1', text: 'at the cap' })).status).toBe(202);
    await open[0]?.next((e) => reply(e).state === 'final');
    open[4]?.close();
    await open[4]?.ended;
    // The server sees the close a moment later: wait for it by asking again until it is taken.
    let again = await follow(c, 'c4');
    for (let i = 0; i < 50 && again.status !== 200; i++) again = await follow(c, 'c4');
    expect(again.status).toBe(200);
    again.close();
    for (const s of open) s.close();
  });

  it('conversations kept in memory are bounded: the least recently used idle one goes; all busy: 503', async () => {
    const s = await openPage(w.port);
    // Fill the table with conversations someone follows (not evictable).
    const held = [];
    for (const id of ['k1', 'k2']) held.push(await follow(s, id));
    const t = await openPage(w.port);
    held.push(await follow(t, 'k3'), await follow(t, 'k4'));
    for (const h of held) expect(h.status).toBe(200);
    const full = await post(w.port, 'send', pageHeaders(s), { conversation: 'k5', text: 'one more' });
    expect(full.status).toBe(503);
    expect(JSON.parse(full.body)).toMatchObject({ error: 'too_many_conversations' });
    // One stops being followed: it can be forgotten, and the new one is taken.
    held[0]?.close();
    await held[0]?.ended;
    let ok = await post(w.port, 'send', pageHeaders(s), { conversation: 'k5', text: 'one more' });
    for (let i = 0; i < 50 && ok.status !== 202; i++)
      ok = await post(w.port, 'send', pageHeaders(s), { conversation: 'k5', text: 'one more' });
    expect(ok.status).toBe(202);
    for (const h of held) h.close();
  });
});
