import { mkdtempSync, rmSync } from 'node:fs';
import { type ClientRequest, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import {
  call,
  conversationEvents,
  openEvents,
  openPage,
  pageHeaders,
  type PlaygroundWorld,
  post,
  type Session,
  startPlayground,
} from './playground-http.js';

// Issue 39, the playground's half, each case written as the attack (HTTP; the cookie tossing in a
// browser is test/browser/playground-cookies.test.ts):
// - who owns a conversation outlives the playground's memory (520 cheap claims pushed the first
//   one out) and a restart, and its id is not in the info log;
// - per-browser caps are per cookie and cookies are free: fresh ids from one address must not take
//   every event stream, nor send past the per-user message limit;
// - PLAYGROUND_TOKEN guesses are slowed and said at warn; the credential cookie is per process,
//   Secure behind HTTPS, and lasts a working day.

const TOKEN = '3f9c1a7be04d52e8a61b9c0d7e2f4a58';

const reply = (e: { event: string; data: unknown }) => e.data as { state: string; text: string };

/** A message and its reply to the end, from the page of `s`. */
async function converse(w: PlaygroundWorld, s: Session, conversation: string, text: string): Promise<void> {
  const events = await conversationEvents(w.port, s, conversation);
  expect(events.status).toBe(200);
  expect((await post(w.port, 'send', pageHeaders(s), { conversation, text })).status).toBe(202);
  await events.next((e) => reply(e).state === 'final');
  events.close();
}

const historyOf = (w: PlaygroundWorld, s: Session, conversation: string) =>
  call(w.port, 'GET', `/playground/api/history?conversation=${conversation}`, {
    host: s.host,
    cookie: s.cookie,
    'x-playground-token': s.token,
  });

describe('a conversation stays its browser’s', () => {
  let dir: string;
  let emulator: Emulator;
  const log: string[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'playground-owner-'));
    emulator = await startEmulator();
  });
  afterAll(async () => {
    await emulator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('after more claims than the playground keeps in memory, and after a restart, another browser gets 403', async () => {
    const limits = { conversations: 5 };
    let w = await startPlayground({ allowRemote: false, limits }, {}, { reuse: { dir, emulator }, log });
    let alice: Session;
    try {
      alice = await openPage(w.port);
      await converse(w, alice, 'alice-secret', 'my salary is 12345');
      expect((await historyOf(w, alice, 'alice-secret')).body).toContain('my salary is 12345');
      // Cheap claims push alice's conversation out of the playground's memory (500 by default; 5 here).
      const mallory = await openPage(w.port);
      for (let i = 0; i < 20; i++) expect((await historyOf(w, mallory, `flood-${i}`)).status).toBe(200);
      const stolen = await historyOf(w, mallory, 'alice-secret');
      expect(stolen.status).toBe(403);
      expect(stolen.body).not.toContain('12345');
      expect(JSON.parse(stolen.body)).toMatchObject({ reason: 'not_your_conversation' });
      const write = await post(w.port, 'send', pageHeaders(mallory), { conversation: 'alice-secret', text: 'mine' });
      expect(write.status).toBe(403);
    } finally {
      await w.close();
    }

    // A restart: memory is empty, the store remembers.
    w = await startPlayground({ allowRemote: false, limits }, {}, { reuse: { dir, emulator }, log });
    try {
      const mallory = await openPage(w.port);
      const stolen = await historyOf(w, mallory, 'alice-secret');
      expect(stolen.status).toBe(403);
      expect(stolen.body).not.toContain('12345');
      const follow = await openEvents(
        w.port,
        `/playground/events?conversation=alice-secret&page_token=${mallory.token}`,
        {
          host: mallory.host,
          cookie: mallory.cookie,
        },
      );
      expect(follow.status).toBe(403);
      follow.close();
      // Alice's browser (its id cookie outlives the process) still reads it, with its page's new token.
      const host = `127.0.0.1:${w.port}`;
      const page = await call(w.port, 'GET', '/', { host, cookie: alice.cookie });
      const token = /<meta name="playground-token" content="([^"]+)">/.exec(page.body)?.[1] ?? '';
      const mine = await historyOf(w, { ...alice, host, origin: `http://${host}`, token }, 'alice-secret');
      expect(mine.status).toBe(200);
      expect(mine.body).toContain('my salary is 12345');
    } finally {
      await w.close();
    }
  }, 120_000);

  it('the conversation id is in no info line (only at debug)', () => {
    const info = log.filter((l) => (JSON.parse(l) as { level: number }).level >= 30);
    expect(info.some((l) => l.includes('playground: message'))).toBe(true);
    expect(info.filter((l) => l.includes('alice-secret'))).toEqual([]);
    expect(log.some((l) => l.includes('alice-secret'))).toBe(true); // at debug it is there
  });
});

/** A plain HTTP request from `localAddress` (127.0.0.2 is another machine's address to the bounds). */
function from(
  localAddress: string,
  port: number,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  req: ClientRequest;
}> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, localAddress, path, method: body === undefined ? 'GET' : 'POST', headers },
      (res) => {
        let text = '';
        const done = () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, req });
        // An event stream answers 200 and stays open: its head is the answer.
        if (res.statusCode === 200 && String(res.headers['content-type']).startsWith('text/event-stream')) done();
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', done);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function pageFrom(localAddress: string, port: number): Promise<Session> {
  const host = `127.0.0.1:${port}`;
  const page = await from(localAddress, port, '/', { host });
  const uid = [page.headers['set-cookie'] ?? []]
    .flat()
    .map((c) => /^playground_uid=([^;]+)/.exec(c)?.[1])
    .find((v) => v !== undefined);
  const token = /<meta name="playground-token" content="([^"]+)">/.exec(page.body)?.[1];
  if (uid === undefined || token === undefined) throw new Error(`no page: ${page.status}`);
  return { cookie: `playground_uid=${uid}`, token, host, origin: `http://${host}` };
}

describe('fresh cookies from one address do not sidestep the caps', () => {
  let w: PlaygroundWorld;
  beforeAll(async () => {
    w = await startPlayground({ allowRemote: false }, { USER_MESSAGES_PER_MINUTE: '2' });
  }, 60_000);
  afterAll(() => w?.close());

  it('17 fresh ids from one address cannot take all 64 event streams: another address still gets one', async () => {
    const open: ClientRequest[] = [];
    const statuses: number[] = [];
    try {
      for (let b = 0; b < 17; b++) {
        const s = await pageFrom('127.0.0.1', w.port);
        for (let i = 0; i < 4; i++) {
          const r = await from(
            '127.0.0.1',
            w.port,
            `/playground/events?conversation=m${b}x${i}&page_token=${s.token}`,
            {
              host: s.host,
              cookie: s.cookie,
            },
          );
          statuses.push(r.status);
          open.push(r.req);
          if (r.status === 429) expect(JSON.parse(r.body)).toMatchObject({ error: 'too_many_streams' });
        }
      }
      expect(statuses.filter((x) => x === 200)).toHaveLength(16);
      expect(statuses.filter((x) => x === 429)).toHaveLength(68 - 16);
      const owner = await pageFrom('127.0.0.2', w.port);
      const mine = await from('127.0.0.2', w.port, `/playground/events?conversation=owner&page_token=${owner.token}`, {
        host: owner.host,
        cookie: owner.cookie,
      });
      open.push(mine.req);
      expect(mine.status).toBe(200);
    } finally {
      for (const r of open) r.destroy();
    }
  }, 120_000);

  it('the per-user message limit holds per address too (4 browsers’ worth), whatever the cookies', async () => {
    const before = w.upstreamMessages().length;
    const answers: number[] = [];
    const waits: Promise<unknown>[] = [];
    for (let b = 0; b < 5; b++) {
      const s = await pageFrom('127.0.0.1', w.port);
      const events = await openEvents(w.port, `/playground/events?conversation=flood${b}&page_token=${s.token}`, {
        host: s.host,
        cookie: s.cookie,
      });
      let finals = 0;
      for (let i = 0; i < 2; i++) {
        const r = await from(
          '127.0.0.1',
          w.port,
          '/playground/api/send',
          pageHeaders(s),
          JSON.stringify({ conversation: `flood${b}`, text: `m${b}.${i}` }),
        );
        answers.push(r.status);
        if (r.status === 429) expect(JSON.parse(r.body)).toMatchObject({ error: 'slow_down' });
        if (r.status === 202) finals++;
      }
      waits.push(
        (async () => {
          for (let seen = 0; seen < finals; seen++)
            await events.next((e) => reply(e).state === 'final' && reply(e).text.includes(`m${b}.${seen}`));
          events.close();
        })(),
      );
    }
    // USER_MESSAGES_PER_MINUTE=2: an address may send 8 a minute, in any number of browsers.
    expect(answers).toEqual([202, 202, 202, 202, 202, 202, 202, 202, 429, 429]);
    await Promise.all(waits);
    expect(w.upstreamMessages().length - before).toBe(8);
    const other = await pageFrom('127.0.0.2', w.port);
    const sent = await from(
      '127.0.0.2',
      w.port,
      '/playground/api/send',
      pageHeaders(other),
      JSON.stringify({ conversation: 'fine', text: 'hello' }),
    );
    expect(sent.status).toBe(202);
  }, 120_000);
});

describe('PLAYGROUND_TOKEN: guesses slowed and said; the credential cookie per process, Secure behind HTTPS, a working day', () => {
  const log: string[] = [];
  const trustProxy = { ranges: [{ address: '127.0.0.1', prefix: 32, family: 4 as const }] };
  const plan = { allowRemote: true, token: TOKEN, publicHosts: ['bridge.example.test'], trustProxy };
  let w: PlaygroundWorld;
  beforeAll(async () => {
    w = await startPlayground(plan, {}, { log });
  }, 60_000);
  afterAll(() => w?.close());

  it('five wrong guesses from an address: then even the right token waits (429), others are not slowed; each said at warn without the guess', async () => {
    const host = `127.0.0.1:${w.port}`;
    for (let i = 0; i < 5; i++) {
      const wrong = await from('127.0.0.2', w.port, '/playground/app.js', {
        host,
        authorization: `Bearer guess-number-${i}-xyz`,
      });
      expect(wrong.status).toBe(401);
    }
    const right = await from('127.0.0.2', w.port, '/playground/app.js', { host, authorization: `Bearer ${TOKEN}` });
    expect(right.status).toBe(429);
    expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
    const page = await from('127.0.0.2', w.port, `/playground?token=${TOKEN}`, { host });
    expect(page.status).toBe(429);
    expect(
      (await from('127.0.0.3', w.port, '/playground/app.js', { host, authorization: `Bearer ${TOKEN}` })).status,
    ).toBe(200);
    const warns = log.filter((l) => l.includes('wrong PLAYGROUND_TOKEN'));
    expect(warns).toHaveLength(5);
    for (const l of warns) {
      expect((JSON.parse(l) as { level: number }).level).toBe(40);
      expect(l).toContain('127.0.0.2');
      expect(l).not.toContain('guess-number');
    }
  });

  it('the credential cookie: __Host-, Secure behind HTTPS, Max-Age a working day, and another after a restart', async () => {
    const viaTls = await call(w.port, 'GET', `/playground?token=${TOKEN}`, {
      host: 'bridge.example.test',
      'x-forwarded-proto': 'https',
      'x-forwarded-for': '203.0.113.9',
    });
    expect(viaTls.status).toBe(200);
    const set = [viaTls.headers['set-cookie'] ?? []].flat();
    expect(set).toHaveLength(1);
    expect(set[0]).toMatch(/^__Host-playground_auth=[^;]+; Path=\/; Max-Age=36000; HttpOnly; SameSite=Strict; Secure$/);
    const cookie = set[0]?.split(';')[0] ?? '';
    const host = { host: 'bridge.example.test', 'x-forwarded-proto': 'https' };
    expect((await call(w.port, 'GET', '/playground/app.js', { ...host, cookie })).status).toBe(200);
    // Over plain http to a name that is not loopback: no __Host- (browsers refuse it there), no Secure.
    const plain = await from('127.0.0.4', w.port, `/playground?token=${TOKEN}`, { host: 'bridge.example.test' });
    expect([plain.headers['set-cookie'] ?? []].flat()).toEqual([
      expect.stringMatching(/^playground_auth=[^;]+; Path=\/; Max-Age=36000; HttpOnly; SameSite=Strict$/),
    ]);
    // A restart: the same token makes another cookie; the old one opens nothing.
    const next = await startPlayground(plan);
    try {
      expect((await call(next.port, 'GET', '/playground/app.js', { ...host, cookie })).status).toBe(401);
      const again = await call(next.port, 'GET', `/playground?token=${TOKEN}`, host);
      expect([again.headers['set-cookie'] ?? []].flat()[0]?.split(';')[0]).not.toBe(cookie);
    } finally {
      await next.close();
    }
  }, 60_000);
});
