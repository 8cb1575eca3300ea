import { App, LogLevel } from '@slack/bolt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rawRequest } from '../../../test/fakes/raw-http.js';
import { signSlackRequest } from '../../../test/fakes/slack/signer.js';
import { silentLogger } from '../../logger.js';
import { createHttpServer, type HttpServer } from '../../server/http-server.js';
import { createMetrics } from '../../server/metrics.js';
import type { BoltLogger } from './app.js';
import { EventsReceiver } from './http-receiver.js';

// The Events API listener behind the real HTTP server and a real Bolt app, fed what an attacker
// (or a broken proxy) would send. Each test looks at what the client gets back.

const SECRET = 'receiver-test-signing-secret';
const MB = 1024 * 1024;

interface Harness {
  port: number;
  url: string;
  warnings: string[];
  mentions: string[];
  actions: string[];
  clock: { now: number };
}

let server: HttpServer | undefined;
let receiver: EventsReceiver | undefined;
const rejections: unknown[] = [];
const onRejection = (reason: unknown) => rejections.push(reason);

beforeEach(() => {
  rejections.length = 0;
  process.on('unhandledRejection', onRejection);
});

afterEach(async () => {
  await receiver?.stop();
  await server?.close();
  server = undefined;
  receiver = undefined;
  process.off('unhandledRejection', onRejection);
});

async function start(bodyTimeoutMs?: number): Promise<Harness> {
  const warnings: string[] = [];
  const mentions: string[] = [];
  const actions: string[] = [];
  const clock = { now: Date.now() };
  const logger: BoltLogger = {
    debug: () => {},
    info: () => {},
    warn: (...m) => warnings.push(m.join(' ')),
    error: () => {},
    setLevel: () => {},
    getLevel: () => LogLevel.INFO,
    setName: () => {},
  };
  receiver = new EventsReceiver({ signingSecret: SECRET, logger, now: () => clock.now });
  const app = new App({
    receiver,
    logger,
    authorize: async () => ({ botToken: 'xoxb-test', botUserId: 'U0BOT', botId: 'B0BOT', teamId: 'T1' }),
  });
  app.event('app_mention', async ({ event }) => {
    mentions.push(event.text);
  });
  app.action('stop', async ({ ack, body }) => {
    await ack();
    actions.push(body.type);
  });
  server = createHttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: silentLogger,
    metrics: createMetrics({ defaultMetrics: false }),
    readiness: () => ({ ready: true, checks: {} }),
    ...(bodyTimeoutMs !== undefined ? { bodyTimeoutMs } : {}),
  });
  server.mount('/slack/events', receiver.requestListener);
  const { port } = await server.listen();
  await app.start();
  return { port, url: `http://127.0.0.1:${port}/slack/events`, warnings, mentions, actions, clock };
}

function signedHeaders(body: string, ts: number, contentType = 'application/json'): Record<string, string> {
  return {
    'content-type': contentType,
    'x-slack-request-timestamp': String(ts),
    'x-slack-signature': signSlackRequest(SECRET, ts, body),
  };
}

async function post(h: Harness, body: string, contentType?: string, tsOffsetSec = 0): Promise<number> {
  const ts = Math.floor(h.clock.now / 1000) + tsOffsetSec;
  const res = await fetch(h.url, { method: 'POST', headers: signedHeaders(body, ts, contentType), body });
  await res.text();
  return res.status;
}

const mention = (text: string) =>
  JSON.stringify({
    type: 'event_callback',
    team_id: 'T1',
    api_app_id: 'A1',
    event_id: `Ev${text.length}`,
    event_time: 1,
    event: { type: 'app_mention', user: 'U1', text, ts: '1.1', channel: 'C1', event_ts: '1.1' },
  });

const FORM = 'application/x-www-form-urlencoded';

describe('Slack events receiver facing hostile input', () => {
  it('hands a signed event and a signed interaction (form payload) to Bolt', async () => {
    const h = await start();
    expect(await post(h, mention('<@U0BOT> hi'))).toBe(200);
    await expect.poll(() => h.mentions).toEqual(['<@U0BOT> hi']);

    const payload = JSON.stringify({
      type: 'block_actions',
      team: { id: 'T1' },
      user: { id: 'U1' },
      api_app_id: 'A1',
      token: 'legacy',
      trigger_id: '1.2',
      container: { type: 'message', message_ts: '1.1', channel_id: 'C1' },
      channel: { id: 'C1' },
      actions: [{ type: 'button', action_id: 'stop', block_id: 'b', value: 'x', action_ts: '1.3' }],
    });
    expect(await post(h, `payload=${encodeURIComponent(payload)}`, FORM)).toBe(200);
    expect(h.actions).toEqual(['block_actions']);
  });

  it('after closeEvents (SIGTERM): an event is answered 503 and reaches no listener; a Stop click still works', async () => {
    const h = await start();
    await receiver!.closeEvents();
    // Not acked: Slack delivers it again, to a replica that is not stopping.
    expect(await post(h, mention('<@U0BOT> during the drain'))).toBe(503);
    const payload = JSON.stringify({
      type: 'block_actions',
      team: { id: 'T1' },
      user: { id: 'U1' },
      api_app_id: 'A1',
      token: 'legacy',
      trigger_id: '1.2',
      container: { type: 'message', message_ts: '1.1', channel_id: 'C1' },
      channel: { id: 'C1' },
      actions: [{ type: 'button', action_id: 'stop', block_id: 'b', value: 'x', action_ts: '1.3' }],
    });
    expect(await post(h, `payload=${encodeURIComponent(payload)}`, FORM)).toBe(200);
    expect(h.actions).toEqual(['block_actions']);
    expect(h.mentions).toEqual([]);
  });

  it('answers an unsigned body with 401 while it is still being sent, and closes', async () => {
    const h = await start();
    const head = `POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n`;
    // At the limit, so the length alone does not refuse it; only a quarter is sent.
    const declared = await rawRequest({ port: h.port, head: `${head}Content-Length: ${MB}`, bodyBytes: MB / 4 });
    expect(declared.status).toBe(401);
    expect(declared.closed).toBe(true);
    // No length at all: 2 MB offered, the answer comes without the end of it.
    const chunked = await rawRequest({
      port: h.port,
      head: `${head}Transfer-Encoding: chunked`,
      bodyBytes: 2 * MB,
      chunked: true,
    });
    expect(chunked.status).toBe(401);
    expect(chunked.closed).toBe(true);
    // Over the limit: refused on its length alone, before anything is read.
    const huge = await rawRequest({ port: h.port, head: `${head}Content-Length: ${100 * MB}`, bodyBytes: 2 * MB });
    expect(huge.status).toBe(413);
    expect(huge.closed).toBe(true);
  });

  it('refuses missing, malformed, past and future timestamps with 401', async () => {
    const h = await start();
    const body = mention('<@U0BOT> forged');
    const nowSec = Math.floor(h.clock.now / 1000);
    const cases: Record<string, string>[] = [
      {},
      { 'x-slack-signature': signSlackRequest(SECRET, nowSec, body) },
      { 'x-slack-signature': 'v0=zz', 'x-slack-request-timestamp': String(nowSec) },
      { 'x-slack-signature': signSlackRequest(SECRET, nowSec, body), 'x-slack-request-timestamp': 'soon' },
      signedHeaders(body, nowSec - 6 * 60),
      signedHeaders(body, nowSec + 10 * 60),
      signedHeaders(body, nowSec + 6 * 60),
      { ...signedHeaders(body, nowSec), 'x-slack-signature': signSlackRequest('wrong', nowSec, body) },
    ];
    for (const headers of cases) {
      const res = await fetch(h.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      expect(res.status).toBe(401);
    }
    // Inside the window both ways: accepted.
    expect(await post(h, mention('<@U0BOT> a bit ahead'), undefined, 4 * 60)).toBe(200);
    expect(await post(h, mention('<@U0BOT> a bit behind!'), undefined, -4 * 60)).toBe(200);
    await expect.poll(() => h.mentions.length).toBe(2);
  });

  it('refuses a body over 1 MB with 413 as soon as the limit is passed (declared or chunked)', async () => {
    const h = await start();
    const ts = Math.floor(h.clock.now / 1000);
    const sig = signSlackRequest(SECRET, ts, 'whatever');
    const head = (type: string, framing: string) =>
      `POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\n${framing}\r\n` +
      `X-Slack-Request-Timestamp: ${ts}\r\nX-Slack-Signature: ${sig}`;

    const declared = await rawRequest({
      port: h.port,
      head: head('application/json', `Content-Length: ${100 * MB}`),
      bodyBytes: 2 * MB,
    });
    expect(declared.status).toBe(413);
    expect(declared.closed).toBe(true);

    // No length given: counted while it streams. The body is never finished, so a 413 proves
    // the refusal came at the limit, not at the end.
    for (const type of ['application/json', FORM]) {
      const chunked = await rawRequest({
        port: h.port,
        head: head(type, 'Transfer-Encoding: chunked'),
        bodyBytes: 2 * MB,
        chunked: true,
      });
      expect(chunked.status).toBe(413);
      expect(chunked.closed).toBe(true);
    }
    expect(h.mentions).toEqual([]);
  });

  it('answers a signed but malformed body with 400 and no unhandled rejection', async () => {
    const h = await start();
    const bodies: [string, string | undefined][] = [
      ['null', undefined],
      ['[]', undefined],
      ['[{"type":"event_callback"}]', undefined],
      ['42', undefined],
      ['"text"', undefined],
      ['not json at all', undefined],
      ['{}', undefined],
      ['{"type":', undefined],
      ['payload=not-json', FORM],
      ['payload=null', FORM],
      ['payload=1&payload=2', FORM],
      ['a=b', FORM],
    ];
    for (const [body, type] of bodies) {
      expect({ body, status: await post(h, body, type) }).toEqual({ body, status: 400 });
    }
    // Still serving.
    expect(await post(h, mention('<@U0BOT> still here'))).toBe(200);
    await expect.poll(() => h.mentions).toEqual(['<@U0BOT> still here']);
    expect(rejections).toEqual([]);
  });

  it('answers 408 and closes when a signed body stops arriving', async () => {
    const h = await start(300);
    const ts = Math.floor(h.clock.now / 1000);
    const started = Date.now();
    const res = await rawRequest({
      port: h.port,
      head:
        `POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n` +
        `X-Slack-Request-Timestamp: ${ts}\r\nX-Slack-Signature: ${signSlackRequest(SECRET, ts, 'x')}`,
      body: '{"type":"event_callback"',
      waitMs: 3000,
    });
    expect(res.status).toBe(408);
    expect(res.closed).toBe(true);
    // Contract: every signed Slack request gets an HTTP answer within 3 s (Slack retries after 3 s).
    expect(Date.now() - started).toBeLessThan(2500);
    expect(rejections).toEqual([]);
  });

  it('logs refused requests once per minute with a count, not once each', async () => {
    const h = await start();
    const body = mention('<@U0BOT> forged');
    const forged = () =>
      fetch(h.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.status);
    for (let i = 0; i < 5; i++) expect(await forged()).toBe(401);
    expect(h.warnings).toHaveLength(1);
    expect(h.warnings[0]).toContain('refused with 401: 1');

    h.clock.now += 30_000;
    for (let i = 0; i < 3; i++) await forged();
    expect(h.warnings).toHaveLength(1);

    h.clock.now += 30_000;
    await forged();
    expect(h.warnings).toHaveLength(2);
    expect(h.warnings[1]).toMatch(/refused with 401: 8 in the last 60 s \(no_signature: 8\)/);
  });
});
