import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, LogLevel } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import type { BoltLogger } from './app.js';
import { EventsReceiver } from './http-receiver.js';

// The signature check rule by rule (mutation testing): each refusal with its reason as the
// operator's log shows it, the replay window at its exact edges, and signatures or timestamps
// with something before or after the expected form, which must be refused (401), never crash
// the comparison (500) or skip the window.

const SECRET = 'mutants-signing-secret';
const NOW_MS = 1_700_000_000_000; // a whole second
const NOW = NOW_MS / 1000;

let server: Server | undefined;
let receiver: EventsReceiver | undefined;

afterEach(async () => {
  await receiver?.stop();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
  receiver = undefined;
});

async function start(): Promise<{
  send: (headers: Record<string, string>, body: string) => Promise<number>;
  warnings: string[];
  mentions: string[];
}> {
  const warnings: string[] = [];
  const mentions: string[] = [];
  const logger: BoltLogger = {
    debug: () => {},
    info: () => {},
    warn: (...m) => warnings.push(m.join(' ')),
    error: () => {},
    setLevel: () => {},
    getLevel: () => LogLevel.INFO,
    setName: () => {},
  };
  // Interval 0: every refusal is logged on its own, with its reason.
  receiver = new EventsReceiver({ signingSecret: SECRET, logger, now: () => NOW_MS, refusalLogIntervalMs: 0 });
  const app = new App({
    receiver,
    logger,
    authorize: async () => ({ botToken: 'xoxb-test', botUserId: 'U0BOT', botId: 'B0BOT', teamId: 'T1' }),
  });
  app.event('app_mention', async ({ event }) => {
    mentions.push(event.text);
  });
  server = createServer(receiver.requestListener);
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await app.start();
  const send = async (headers: Record<string, string>, body: string) => {
    const res = await fetch(`http://127.0.0.1:${port}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    await res.text();
    return res.status;
  };
  return { send, warnings, mentions };
}

const body = JSON.stringify({
  type: 'event_callback',
  team_id: 'T1',
  api_app_id: 'A1',
  event_id: 'Ev1',
  event_time: 1,
  event: { type: 'app_mention', user: 'U1', text: '<@U0BOT> hi', ts: '1.1', channel: 'C1', event_ts: '1.1' },
});

const hmacOver = (ts: string, b: string) => `v0=${createHmac('sha256', SECRET).update(`v0:${ts}:${b}`).digest('hex')}`;

/** Headers signed with the right secret over the given timestamp text. */
const signed = (ts: string, b = body) => ({ 'x-slack-request-timestamp': ts, 'x-slack-signature': hmacOver(ts, b) });

const reason = (w: string) => /\((\w+): 1\)$/.exec(w)?.[1];

describe('Slack signature check', () => {
  it('accepts a signed request at the edges of the 5-minute window, both ways', async () => {
    const h = await start();
    expect(await h.send(signed(String(NOW - 300)), body)).toBe(200);
    expect(await h.send(signed(String(NOW + 300)), body)).toBe(200);
    expect(await h.send(signed(String(NOW)), body)).toBe(200);
    await expect.poll(() => h.mentions.length).toBe(3);
    expect(h.warnings).toEqual([]);
  });

  it('refuses one second beyond the window, both ways, as stale', async () => {
    const h = await start();
    expect(await h.send(signed(String(NOW - 301)), body)).toBe(401);
    expect(await h.send(signed(String(NOW + 301)), body)).toBe(401);
    expect(h.warnings.map(reason)).toEqual(['stale_timestamp', 'stale_timestamp']);
  });

  it('names each refusal: missing headers, malformed headers, wrong HMAC', async () => {
    const h = await start();
    const good = signed(String(NOW));
    expect(await h.send({}, body)).toBe(401);
    expect(await h.send({ 'x-slack-signature': good['x-slack-signature'] }, body)).toBe(401);
    expect(await h.send({ 'x-slack-request-timestamp': String(NOW) }, body)).toBe(401);
    expect(await h.send({ ...good, 'x-slack-signature': 'v0=zz' }, body)).toBe(401);
    expect(await h.send({ ...good, 'x-slack-signature': hmacOver(String(NOW), `${body} `) }, body)).toBe(401);
    expect(await h.send({ ...good, 'x-slack-signature': hmacOver(String(NOW - 1), body) }, body)).toBe(401);
    expect(h.warnings.map(reason)).toEqual([
      'no_signature',
      'no_signature',
      'no_signature',
      'bad_signature_header',
      'bad_signature',
      'bad_signature',
    ]);
    expect(h.mentions).toEqual([]);
  });

  it('refuses a signature with anything before or after its form, or in upper case (401, not a crash)', async () => {
    const h = await start();
    const sig = signed(String(NOW))['x-slack-signature'];
    const variants = [
      `x${sig}`,
      `${sig}0`,
      sig.toUpperCase().replace('V0=', 'v0='),
      sig.slice(0, -1),
      `v1=${sig.slice(3)}`,
    ];
    for (const v of variants) {
      expect({
        v,
        status: await h.send({ 'x-slack-request-timestamp': String(NOW), 'x-slack-signature': v }, body),
      }).toEqual({
        v,
        status: 401,
      });
    }
    expect(h.warnings.map(reason)).toEqual(Array(variants.length).fill('bad_signature_header'));
  });

  it('refuses a correctly signed timestamp that is not 1 to 12 digits (it would escape the window)', async () => {
    const h = await start();
    for (const ts of [`x${NOW}`, `${NOW}x`, `-${NOW}`, `${NOW}.5`, '', '0001700000000']) {
      expect({ ts, status: await h.send(signed(ts), body) }).toEqual({ ts, status: 401 });
    }
    expect(h.warnings.map(reason)).toEqual([
      'bad_signature_header',
      'bad_signature_header',
      'bad_signature_header',
      'bad_signature_header',
      'bad_signature_header',
      'bad_signature_header',
    ]);
    expect(h.mentions).toEqual([]);
  });
});
