import { LogLevel } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../../../test/fakes/slack/index.js';
import { silentLogger } from '../../logger.js';
import { createHttpServer, type HttpServer } from '../../server/http-server.js';
import { createMetrics } from '../../server/metrics.js';
import { openStore, type SqliteStore } from '../../store/sqlite/index.js';
import type { BoltLogger } from './app.js';
import { createInstallationStore } from './installation-store.js';
import { createOAuth, INSTALL_PATH, REDIRECT_PATH, scrubbingLogger } from './oauth.js';
import {
  clientAddress,
  clientNetwork,
  MAX_PENDING_PER_CLIENT,
  MemoryOAuthStates,
  type OAuthStates,
  SingleUseStateStore,
  STATE_TTL_MS,
} from './oauth-state.js';

const quiet: BoltLogger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  setLevel: () => {},
  getLevel: () => LogLevel.INFO,
  setName: () => {},
};

describe('Slack OAuth state and pages', () => {
  let fake: FakeSlack | undefined;
  let http: HttpServer | undefined;
  let store: SqliteStore | undefined;

  afterEach(async () => {
    await http?.close();
    await fake?.close();
    await store?.close();
    fake = undefined;
    http = undefined;
    store = undefined;
  });

  async function start(clock: { now: number }) {
    fake = await startFakeSlack({ limits: {}, oauth: { clientId: 'cid', clientSecret: 'csecret' } });
    store = openStore(':memory:');
    const oauth = createOAuth({
      clientId: 'cid',
      clientSecret: 'csecret',
      stateSecret: 'state-secret',
      installationStore: createInstallationStore(store.installations),
      apiUrl: fake.apiUrl,
      logger: quiet,
      now: () => clock.now,
    });
    http = createHttpServer({
      host: '127.0.0.1',
      port: 0,
      logger: silentLogger,
      metrics: createMetrics({ defaultMetrics: false }),
      readiness: () => ({ ready: true, checks: {} }),
    });
    http.mount(INSTALL_PATH, oauth.listener);
    http.mount(REDIRECT_PATH, oauth.listener);
    const { port } = await http.listen();
    return `http://127.0.0.1:${port}`;
  }

  async function begin(base: string) {
    const res = await fetch(`${base}${INSTALL_PATH}`, { redirect: 'manual' });
    const state = new URL(res.headers.get('location') ?? '').searchParams.get('state') ?? '';
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    return (code = 'good-code') =>
      fetch(`${base}${REDIRECT_PATH}?code=${code}&state=${encodeURIComponent(state)}`, {
        headers: { cookie },
        redirect: 'manual',
      });
  }

  it('refuses a state older than 10 minutes with the 400 page', async () => {
    const clock = { now: 1_000_000 };
    const base = await start(clock);
    const late = await begin(base);
    const inTime = await begin(base);
    clock.now += STATE_TTL_MS - 1;
    expect((await inTime()).status).toBe(200);
    clock.now += 2;
    const res = await late();
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('expired or was already used');
    expect(await store?.installations.count()).toBe(1);
  });

  it('uses up the state even when the exchange fails', async () => {
    const base = await start({ now: 1 });
    const redirect = await begin(base);
    expect((await redirect('bad-code')).status).toBe(500);
    expect((await redirect('good-code')).status).toBe(400);
    expect(await store?.installations.count()).toBe(0);
  });

  it('answers other methods with 405 and a body with 413, unread', async () => {
    const base = await start({ now: 1 });
    expect((await fetch(`${base}${INSTALL_PATH}`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${base}${INSTALL_PATH}`, { method: 'POST', body: 'x=1' })).status).toBe(413);
    expect((await fetch(`${base}${INSTALL_PATH}/other`)).status).toBe(404);
  });
});

describe('SingleUseStateStore', () => {
  // Every link asks for the bridge's scopes: a verified state answers with those options.
  const installOptions = { scopes: ['app_mentions:read'] };

  it('keeps a bounded number of pending states: one without a client is refused past it, one for a client takes from the biggest holder', async () => {
    const memory = new MemoryOAuthStates(3);
    const states = new SingleUseStateStore({ states: memory, installOptions, now: () => 0 });
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push(await states.generateStateParam(installOptions, new Date()));
    await expect(states.generateStateParam(installOptions, new Date())).rejects.toThrow(/too many pending/);
    expect(memory.size).toBe(3);
    // The three without an address are one holder, the biggest: its oldest link goes.
    const first = (await states.issueFor('10.0.0.1')) ?? '';
    expect(memory.size).toBe(3);
    await expect(states.verifyStateParam(new Date(), made[0] ?? '')).rejects.toThrow(/unknown/);
    expect(await states.verifyStateParam(new Date(), made[1] ?? '')).toEqual(installOptions);
    expect(await states.verifyStateParam(new Date(), first)).toEqual(installOptions);
  });

  it('a flood from the /64s of one IPv6 /48 cancels no lone pending link and leaves room for newcomers', async () => {
    let t = 0;
    const memory = new MemoryOAuthStates(50);
    const states = new SingleUseStateStore({ states: memory, installOptions, now: () => t });
    const victim = (await states.issueFor(clientAddress('198.51.100.7'))) ?? '';
    t += 1;
    // 40 /64s of 2001:db8:1::/48, 5 links each, one after another (the issue's attack, scaled).
    let granted = 0;
    for (let i = 0; i < 40; i++)
      for (let k = 0; k < MAX_PENDING_PER_CLIENT; k++) {
        if ((await states.issueFor(clientAddress(`2001:db8:1:${i.toString(16)}::${k + 1}`))) !== undefined) granted++;
        t += 1;
      }
    // It fills what is free, then its /48, the biggest holder, is refused rather than served from others.
    expect(granted).toBe(49);
    expect(memory.size).toBe(50);
    // Someone else on another network still gets a link; the victim's link still works.
    const newcomer = (await states.issueFor(clientAddress('2001:db8:2:1::1'))) ?? '';
    expect(await states.verifyStateParam(new Date(), victim)).toEqual(installOptions);
    expect(await states.verifyStateParam(new Date(), newcomer)).toEqual(installOptions);
  });

  it('shares the total bound by network: IPv4 /24, IPv6 /48', () => {
    expect(clientNetwork(clientAddress('203.0.113.7'))).toBe('203.0.113.0/24');
    expect(clientNetwork(clientAddress('::ffff:203.0.113.200'))).toBe('203.0.113.0/24');
    expect(clientNetwork(clientAddress('2001:db8:0:1:aaaa::1'))).toBe('2001:db8:0::/48');
    expect(clientNetwork(clientAddress('2001:DB8:0:ffff::1'))).toBe('2001:db8:0::/48');
    expect(clientNetwork('unknown')).toBe('unknown');
  });

  it('holds at most MAX_PENDING_PER_CLIENT links per client address until one is used or expires', async () => {
    let t = 0;
    const memory = new MemoryOAuthStates();
    const states = new SingleUseStateStore({ states: memory, installOptions, now: () => t });
    const mine: (string | undefined)[] = [];
    for (let i = 0; i < MAX_PENDING_PER_CLIENT + 3; i++) mine.push(await states.issueFor('10.0.0.1'));
    expect(mine.filter((x) => x !== undefined)).toHaveLength(MAX_PENDING_PER_CLIENT);
    expect(await states.issueFor('10.0.0.2')).toBeDefined();
    await states.verifyStateParam(new Date(), mine[0] ?? '');
    expect(await states.issueFor('10.0.0.1')).toBeDefined();
    expect(await states.issueFor('10.0.0.1')).toBeUndefined();
    t += STATE_TTL_MS + 1;
    expect(await states.issueFor('10.0.0.1')).toBeDefined();
  });

  it('counts a client by its IPv4 address, or its IPv6 /64', async () => {
    expect(clientAddress('203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddress('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddress('2001:db8:0:1:aaaa::1')).toBe('2001:db8:0:1::/64');
    expect(clientAddress('2001:db8:0:1:bbbb:cccc:dddd:eeee')).toBe('2001:db8:0:1::/64');
    expect(clientAddress('::1')).toBe('0:0:0:0::/64');
    expect(clientAddress(undefined)).toBe('unknown');
  });

  it('sweeps expired states when new ones are made', async () => {
    let t = 0;
    const memory = new MemoryOAuthStates();
    const states = new SingleUseStateStore({ states: memory, installOptions, now: () => t });
    await states.generateStateParam(installOptions, new Date());
    await states.generateStateParam(installOptions, new Date());
    t += STATE_TTL_MS + 1;
    await states.generateStateParam(installOptions, new Date());
    expect(memory.size).toBe(1);
  });

  it('keeps digests of the states, never the values in the links', async () => {
    const memory = new MemoryOAuthStates();
    const issued: string[] = [];
    const recording: OAuthStates = {
      issue: async (s, at, limit) => {
        issued.push(s);
        return memory.issue(s, at, limit);
      },
      consume: (s, now) => memory.consume(s, now),
      prune: (before) => memory.prune(before),
    };
    const states = new SingleUseStateStore({ states: recording, installOptions, now: () => 0 });
    const state = await states.generateStateParam(installOptions, new Date());
    expect(issued).toHaveLength(1);
    expect(issued[0]).not.toContain(state);
    expect(await states.verifyStateParam(new Date(), state)).toEqual(installOptions);
  });
});

describe('scrubbingLogger', () => {
  it('blanks the secrets, client_secret fields and the OAuth code at every level', async () => {
    const out: string[] = [];
    const inner: BoltLogger = {
      ...quiet,
      debug: (...m) => out.push(m.join(' ')),
      error: (...m) => out.push(m.join(' ')),
    };
    const log = scrubbingLogger(inner, ['the-state-secret', 'the-client-secret']);
    log.debug('http request body: {"code":"123.456","client_id":"cid","client_secret":"sekrit"}');
    log.debug('form', 'client_id=cid&client_secret=sekrit2&code=x');
    log.error(new Error('failed with the-client-secret and the-state-secret'));
    const all = out.join('\n');
    for (const s of ['sekrit', 'sekrit2', '123.456', 'the-client-secret', 'the-state-secret']) {
      expect(all).not.toContain(s);
    }
    expect(all).toContain('"client_id":"cid"');
  });
});
