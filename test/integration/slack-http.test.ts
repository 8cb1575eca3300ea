import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SlackConnector } from '../../src/connectors/slack/connector.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { assertNoSlackPings } from '../fakes/slack/mention-check.js';
import { connectorFor, EchoHandler, type MiniServer, slackConfig, startMiniServer } from './slack-helpers.js';

describe('Slack connector in HTTP mode (Events API on the shared server)', () => {
  let fake: FakeSlack;
  let server: MiniServer;
  let conn: SlackConnector;
  let relay: EchoHandler;
  let eventsUrl: string;

  beforeEach(async () => {
    fake = await startFakeSlack({ limits: {} });
    server = await startMiniServer();
    conn = connectorFor(fake, { config: slackConfig(fake, { appToken: undefined }), http: server });
    relay = new EchoHandler();
    await conn.start(relay);
    eventsUrl = `${server.url}/slack/events`;
  });

  afterEach(async () => {
    await conn.shutdown();
    await server.close();
    await fake.close();
    assertNoSlackPings(fake.calls);
  });

  it('is ready after auth.test and answers url_verification', async () => {
    expect(conn.isReady()).toBe(true);
    expect(fake.calls.some((c) => c.method === 'auth.test')).toBe(true);
    const res = await fake.postSignedEvent(eventsUrl, { type: 'url_verification', challenge: 'abc123', token: 't' });
    expect(res.status).toBe(200);
    expect(res.body).toContain('abc123');
  });

  it('answers a signed mention in its thread', async () => {
    const post = fake.userPost({ channel: 'C1', text: '<@U0BOT> over http' });
    const res = await fake.postSignedEvent(eventsUrl, fake.envelope(post.mention ?? {}));
    expect(res.status).toBe(200);
    await relay.answered(1);
    expect(fake.botMessages('C1', post.ts)[0]?.text).toBe('You said: over http');
  });

  it('refuses bad, missing and stale signatures with 401 and does nothing else', async () => {
    const post = fake.userPost({ channel: 'C1', text: '<@U0BOT> forged' });
    const body = fake.envelope(post.mention ?? {});
    const callsBefore = fake.calls.length;
    for (const o of [{ badSignature: true }, { noSignature: true }, { stale: true }]) {
      const res = await fake.postSignedEvent(eventsUrl, body, o);
      expect(res.status).toBe(401);
    }
    const res = await fake.postSignedEvent(
      eventsUrl,
      { type: 'url_verification', challenge: 'x' },
      { badSignature: true },
    );
    expect(res.status).toBe(401);
    await conn.idle();
    expect(relay.received).toHaveLength(0);
    expect(fake.calls.length).toBe(callsBefore);
  });

  it('hands retries (X-Slack-Retry-Num) over with the same event id: one reply', async () => {
    const post = fake.userPost({ channel: 'C1', text: '<@U0BOT> retried' });
    const body = fake.envelope(post.mention ?? {});
    expect((await fake.postSignedEvent(eventsUrl, body)).status).toBe(200);
    expect((await fake.postSignedEvent(eventsUrl, body, { retryNum: 1 })).status).toBe(200);
    expect((await fake.postSignedEvent(eventsUrl, fake.envelope(post.message), { retryNum: 2 })).status).toBe(200);
    await relay.answered(1);
    await conn.idle();
    expect(relay.received).toHaveLength(1);
    expect(fake.botMessages('C1', post.ts)).toHaveLength(1);
  });

  it('answers 503 once stopped', async () => {
    await conn.shutdown();
    const post = fake.userPost({ channel: 'C1', text: '<@U0BOT> late' });
    const res = await fake.postSignedEvent(eventsUrl, fake.envelope(post.mention ?? {}));
    expect(res.status).toBe(503);
    expect(conn.isReady()).toBe(false);
  });
});
