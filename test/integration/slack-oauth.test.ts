import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SlackConnector } from '../../src/connectors/slack/connector.js';
import { renderMrkdwn } from '../../src/connectors/slack/render.js';
import { openStore, type Store } from '../../src/store/index.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { createLogger } from '../../src/logger.js';
import { connectorFor, EchoHandler, type MiniServer, slackConfig, startMiniServer } from './slack-helpers.js';

describe('Slack multi-workspace OAuth', () => {
  let fake: FakeSlack;
  let server: MiniServer;
  let store: Store;
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
    await conn.stop();
    await server.close();
    await fake.close();
    store.close();
  });

  async function install(): Promise<Response> {
    const start = await fetch(`${server.url}/slack/install`, { redirect: 'manual' });
    expect(start.status).toBe(302);
    const location = new URL(start.headers.get('location') ?? '');
    expect(location.searchParams.get('client_id')).toBe('cid');
    expect(location.searchParams.get('scope')).toContain('app_mentions:read');
    const state = location.searchParams.get('state') ?? '';
    const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    return fetch(`${server.url}/slack/oauth_redirect?code=good-code&state=${encodeURIComponent(state)}`, {
      headers: { cookie },
      redirect: 'manual',
    });
  }

  it('stores the installation and uses its token for later events', async () => {
    const done = await install();
    expect(done.status).toBe(200);
    expect(store.installations.count()).toBe(1);
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
    expect(reply?.text).toBe(renderMrkdwn('You said: hello from the new team'));
    expect(reply?.user).toBe('U0BOT2');
  });

  it('refuses a callback without the state cookie and stores nothing', async () => {
    const res = await fetch(`${server.url}/slack/oauth_redirect?code=good-code&state=forged`, { redirect: 'manual' });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(store.installations.count()).toBe(0);
  });

  it('forgets the installation on app_uninstalled', async () => {
    await install();
    expect(store.installations.count()).toBe(1);
    const res = await fake.postSignedEvent(
      `${server.url}/slack/events`,
      fake.envelope({ type: 'app_uninstalled', event_ts: '1.1' }, 'T0OAUTH'),
    );
    expect(res.status).toBe(200);
    await expect.poll(() => store.installations.count(), { timeout: 5000 }).toBe(0);
  });
});
