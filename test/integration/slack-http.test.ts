import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type HttpConnector, startHttpConnector } from './slack-helpers.js';

describe('Slack connector in HTTP mode (Events API on the shared server)', () => {
  let w: HttpConnector;
  beforeEach(async () => {
    w = await startHttpConnector({ limits: {} });
  });
  afterEach(() => w.close());

  it('is ready after auth.test and answers url_verification', async () => {
    expect(w.conn.isReady()).toBe(true);
    expect(w.fake.calls.some((c) => c.method === 'auth.test')).toBe(true);
    const res = await w.fake.postSignedEvent(w.eventsUrl, {
      type: 'url_verification',
      challenge: 'abc123',
      token: 't',
    });
    expect(res.status).toBe(200);
    expect(res.body).toContain('abc123');
  });

  it('answers a signed mention in its thread', async () => {
    const post = w.fake.userPost({ channel: 'C1', text: '<@U0BOT> over http' });
    const res = await w.fake.postSignedEvent(w.eventsUrl, w.fake.envelope(post.mention ?? {}));
    expect(res.status).toBe(200);
    await w.relay.answered(1);
    expect(w.fake.botMessages('C1', post.ts)[0]?.text).toBe('You said: over http');
  });

  it('refuses bad, missing and stale signatures with 401 and does nothing else', async () => {
    const post = w.fake.userPost({ channel: 'C1', text: '<@U0BOT> forged' });
    const body = w.fake.envelope(post.mention ?? {});
    const callsBefore = w.fake.calls.length;
    for (const o of [{ badSignature: true }, { noSignature: true }, { stale: true }]) {
      const res = await w.fake.postSignedEvent(w.eventsUrl, body, o);
      expect(res.status).toBe(401);
    }
    const res = await w.fake.postSignedEvent(
      w.eventsUrl,
      { type: 'url_verification', challenge: 'x' },
      { badSignature: true },
    );
    expect(res.status).toBe(401);
    await w.conn.idle();
    expect(w.relay.received).toHaveLength(0);
    expect(w.fake.calls.length).toBe(callsBefore);
  });

  it('hands retries (X-Slack-Retry-Num) over with the same event id: one reply', async () => {
    const post = w.fake.userPost({ channel: 'C1', text: '<@U0BOT> retried' });
    const body = w.fake.envelope(post.mention ?? {});
    expect((await w.fake.postSignedEvent(w.eventsUrl, body)).status).toBe(200);
    expect((await w.fake.postSignedEvent(w.eventsUrl, body, { retryNum: 1 })).status).toBe(200);
    expect((await w.fake.postSignedEvent(w.eventsUrl, w.fake.envelope(post.message), { retryNum: 2 })).status).toBe(
      200,
    );
    await w.relay.answered(1);
    await w.conn.idle();
    expect(w.relay.received).toHaveLength(1);
    expect(w.fake.botMessages('C1', post.ts)).toHaveLength(1);
  });

  it('answers 503 once stopped', async () => {
    await w.conn.shutdown();
    const post = w.fake.userPost({ channel: 'C1', text: '<@U0BOT> late' });
    const res = await w.fake.postSignedEvent(w.eventsUrl, w.fake.envelope(post.mention ?? {}));
    expect(res.status).toBe(503);
    expect(w.conn.isReady()).toBe(false);
  });
});
