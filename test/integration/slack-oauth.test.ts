import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SlackConnector } from '../../src/connectors/slack/connector.js';
import { openStore, type SqliteStore } from '../../src/store/sqlite/index.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { createLogger } from '../../src/logger.js';
import { createHttpServer, createMetrics, type HttpServer } from '../../src/server/index.js';
import { connectorFor, EchoHandler, type MiniServer, slackConfig, startMiniServer } from './slack-helpers.js';

describe('Slack multi-workspace OAuth', () => {
  let fake: FakeSlack;
  let server: MiniServer;
  let store: SqliteStore;
  let conn: SlackConnector;
  let relay: EchoHandler;

  beforeEach(async () => {
    fake = await startFakeSlack({ limits: {}, oauth: { clientId: 'cid', clientSecret: 'csecret' } });
    server = await startMiniServer();
    store = openStore(':memory:');
    const config = slackConfig(fake, {
      botToken: undefined,
      appToken: undefined,
      oauth: { clientId: 'cid', clientSecret: 'csecret', stateSecret: 'state-secret' },
    });
    conn = connectorFor(fake, {
      config,
      http: server,
      installations: store.installations,
      logger: createLogger({ level: process.env.DBG ? 'debug' : 'silent' }),
    });
    relay = new EchoHandler();
    await conn.start(relay);
  });

  afterEach(async () => {
    await conn.shutdown();
    await server.close();
    await fake.close();
    await store.close();
  });

  async function install(): Promise<Response> {
    const { redirect, cookie } = await beginInstall(server.url);
    return fetch(redirect, { headers: { cookie }, redirect: 'manual' });
  }

  it('stores the installation and uses its token for later events', async () => {
    const done = await install();
    expect(done.status).toBe(200);
    expect(await store.installations.count()).toBe(1);
    expect(fake.calls.some((c) => c.method === 'oauth.v2.access' && c.result === 'ok')).toBe(true);

    const post = fake.userPost({
      channel: 'C9',
      text: '<@U0BOT2> hello from the new team',
      teamId: 'T0OAUTH',
      botUserId: 'U0BOT2',
    });
    const res = await fake.postSignedEvent(`${server.url}/slack/events`, fake.envelope(post.mention ?? {}, 'T0OAUTH'));
    expect(res.status).toBe(200);
    await relay.answered(1);
    expect(relay.received[0]?.text).toBe('hello from the new team');
    expect(relay.received[0]?.origin.workspaceId).toBe('T0OAUTH');
    const reply = fake.botMessages('C9', post.ts)[0];
    expect(reply?.text).toBe('You said: hello from the new team');
    expect(reply?.user).toBe('U0BOT2');
  });

  it('refuses a callback without the state cookie and stores nothing', async () => {
    const res = await fetch(`${server.url}/slack/oauth_redirect?code=good-code&state=forged`, { redirect: 'manual' });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await store.installations.count()).toBe(0);
  });

  it('refuses a replayed state with a clear 400 page and installs once', async () => {
    const { redirect, cookie } = await beginInstall(server.url);
    const first = await fetch(redirect, { headers: { cookie }, redirect: 'manual' });
    expect(first.status).toBe(200);
    const again = await fetch(redirect, { headers: { cookie }, redirect: 'manual' });
    expect(again.status).toBe(400);
    expect(again.headers.get('content-type')).toMatch(/text\/html/);
    expect(await again.text()).toContain('expired or was already used');
    expect(await store.installations.count()).toBe(1);
    expect(fake.calls.filter((c) => c.method === 'oauth.v2.access')).toHaveLength(1);
  });

  it('shows a 200 "cancelled" page when the user declines on Slack (error=access_denied)', async () => {
    const { state, cookie } = await beginInstall(server.url);
    const res = await fetch(
      `${server.url}/slack/oauth_redirect?error=access_denied&state=${encodeURIComponent(state)}`,
      {
        headers: { cookie },
        redirect: 'manual',
      },
    );
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('The installation was cancelled');
    expect(await store.installations.count()).toBe(0);
  });

  it('forgets the installation on app_uninstalled', async () => {
    await install();
    expect(await store.installations.count()).toBe(1);
    const res = await fake.postSignedEvent(
      `${server.url}/slack/events`,
      fake.envelope({ type: 'app_uninstalled', event_ts: '1.1' }, 'T0OAUTH'),
    );
    expect(res.status).toBe(200);
    await expect.poll(() => store.installations.count(), { timeout: 5000 }).toBe(0);
  });
});

/** GET /slack/install as a browser would: the state Slack will send back, and its cookie. */
async function beginInstall(base: string): Promise<{ state: string; cookie: string; redirect: string }> {
  const start = await fetch(`${base}/slack/install`, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const location = new URL(start.headers.get('location') ?? '');
  expect(location.searchParams.get('client_id')).toBe('cid');
  expect(location.searchParams.get('scope')).toContain('app_mentions:read');
  const state = location.searchParams.get('state') ?? '';
  const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return { state, cookie, redirect: `${base}/slack/oauth_redirect?code=good-code&state=${encodeURIComponent(state)}` };
}

describe('Slack OAuth with the logger at debug', () => {
  it('never writes the client secret, state secret, signing secret or tokens', async () => {
    const fake = await startFakeSlack({
      limits: {},
      oauth: { clientId: 'cid', clientSecret: 'oauth-client-secret-1' },
    });
    const store = openStore(':memory:');
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({ level: 'debug', destination: sink });
    const http: HttpServer = createHttpServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      metrics: createMetrics({ defaultMetrics: false }),
      readiness: () => ({ ready: true, checks: {} }),
    });
    const conn = connectorFor(fake, {
      config: slackConfig(fake, {
        botToken: undefined,
        appToken: undefined,
        oauth: { clientId: 'cid', clientSecret: 'oauth-client-secret-1', stateSecret: 'oauth-state-secret-1' },
      }),
      http,
      installations: store.installations,
      logger,
    });
    const relay = new EchoHandler();
    try {
      const { port } = await http.listen();
      const base = `http://127.0.0.1:${port}`;
      await conn.start(relay);
      const { redirect, cookie } = await beginInstall(base);
      expect((await fetch(redirect, { headers: { cookie }, redirect: 'manual' })).status).toBe(200);
      expect(await store.installations.count()).toBe(1);

      const post = fake.userPost({ channel: 'C9', text: '<@U0BOT2> hi', teamId: 'T0OAUTH', botUserId: 'U0BOT2' });
      const event = fake.envelope(post.mention ?? {}, 'T0OAUTH');
      expect((await fake.postSignedEvent(`${base}/slack/events`, event)).status).toBe(200);
      expect((await fake.postSignedEvent(`${base}/slack/events`, event, { badSignature: true })).status).toBe(401);
      await relay.answered(1);
      await conn.idle();
    } finally {
      await conn.shutdown();
      await http.close();
      await fake.close();
      await store.close();
    }
    const log = lines.join('');
    // The debug output is there (so the absence below means something)...
    expect(log).toContain('oauth.v2.access');
    expect(log).toContain('"level":20');
    // ...and holds none of the secrets.
    for (const secret of [
      'oauth-client-secret-1',
      'oauth-state-secret-1',
      fake.signingSecret,
      'xoxb-oauth-installed-token',
      fake.botToken,
      fake.appToken,
    ]) {
      expect(log.includes(secret), `log contains ${secret}`).toBe(false);
    }
  });
});
