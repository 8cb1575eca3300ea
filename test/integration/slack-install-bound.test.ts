import { afterEach, expect, it } from 'vitest';
import { Agent, request as httpRequest } from 'node:http';
import type { SlackConfig } from '../../src/config/config.js';
import type { SlackConnector } from '../../src/connectors/slack/connector.js';
import { MAX_PENDING_PER_CLIENT } from '../../src/connectors/slack/oauth-state.js';
import { silentLogger } from '../../src/logger.js';
import { createHttpServer, createMetrics, type HttpServer } from '../../src/server/index.js';
import { openStore, type SqliteStore } from '../../src/store/sqlite/index.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { connectorFor, EchoHandler, slackConfig } from './slack-helpers.js';

// "A bounded install flow": unauthenticated GET /slack/install stores a state per call. One
// client address holds at most a few pending links (429 beyond), and its flood pushes nobody
// else's pending install out. Through the bridge's HTTP server, @slack/oauth and the SQLite
// store's oauth_states; the second address is another loopback address (127.0.0.2).

let fake: FakeSlack | undefined;
let http: HttpServer | undefined;
let conn: SlackConnector | undefined;
let store: SqliteStore | undefined;
const agents: Agent[] = [];
afterEach(async () => {
  await conn?.shutdown();
  await http?.close();
  await fake?.close();
  await store?.close();
  for (const a of agents.splice(0)) a.destroy();
});

/** A client at `localAddress`: keep-alive connections from that loopback address. */
function from(localAddress: string): { agent: Agent; localAddress: string } {
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  agents.push(agent);
  return { agent, localAddress };
}

type Client = ReturnType<typeof from>;

function get(base: string, path: string, c: Client, cookie?: string) {
  const url = new URL(path, base);
  return new Promise<{ status: number; body: string; location?: string; cookie?: string }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        localAddress: c.localAddress,
        agent: c.agent,
        ...(cookie !== undefined ? { headers: { cookie } } : {}),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => {
          const setCookie = res.headers['set-cookie']?.[0]?.split(';')[0];
          resolve({
            status: res.statusCode ?? 0,
            body,
            ...(res.headers.location !== undefined ? { location: res.headers.location } : {}),
            ...(setCookie !== undefined ? { cookie: setCookie } : {}),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** GET /slack/install, then Slack's redirect back with the state and cookie. */
async function begin(base: string, client: Client) {
  const start = await get(base, '/slack/install', client);
  expect(start.status).toBe(302);
  const state = new URL(start.location ?? '').searchParams.get('state') ?? '';
  return {
    finish: () =>
      get(base, `/slack/oauth_redirect?code=good-code&state=${encodeURIComponent(state)}`, client, start.cookie),
  };
}

/**
 * The install flow as the bridge serves it: a fake Slack with an OAuth app, the bridge's HTTP
 * server, an OAuth-mode connector (`over`: more of its config) keeping states in a SQLite store.
 */
async function startInstallFlow(over: Partial<SlackConfig> = {}) {
  fake = await startFakeSlack({ limits: {}, oauth: { clientId: 'cid', clientSecret: 'csecret' } });
  store = openStore(':memory:');
  http = createHttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: silentLogger,
    metrics: createMetrics({ defaultMetrics: false }),
    readiness: () => ({ ready: true, checks: {} }),
  });
  conn = connectorFor(fake, {
    config: slackConfig(fake, {
      botToken: undefined,
      appToken: undefined,
      oauth: { clientId: 'cid', clientSecret: 'csecret', stateSecret: 'state-secret' },
      ...over,
    }),
    http,
    installations: store.installations,
    oauthStates: store.oauthStates,
  });
  const { port } = await http.listen();
  await conn.start(new EchoHandler());
  return { base: `http://127.0.0.1:${port}`, fake, store };
}

it('2,000 install GETs from one address: a few stored, the rest 429; another address installs all the same', async () => {
  const { base, fake, store } = await startInstallFlow();
  const db = store.db;
  const pending = () => (db.prepare('SELECT COUNT(*) AS n FROM oauth_states').get() as { n: number }).n;

  // An admin at another address opens an install link before the flood.
  const admin = from('127.0.0.2');
  const early = await begin(base, admin);

  const attacker = from('127.0.0.1');
  const statuses = new Map<number, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < 2000) {
        next++;
        const r = await get(base, '/slack/install', attacker);
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status === 429) expect(r.body).toContain('Too many install links');
      }
    }),
  );
  expect(Object.fromEntries(statuses)).toEqual({ 302: MAX_PENDING_PER_CLIENT, 429: 2000 - MAX_PENDING_PER_CLIENT });
  expect(pending()).toBe(1 + MAX_PENDING_PER_CLIENT);

  // The admin's link made before the flood still completes, and so does a new one.
  const done = await early.finish();
  expect(done.status).toBe(200);
  expect(await store.installations.count()).toBe(1);
  const late = await begin(base, admin);
  expect((await late.finish()).status).toBe(200);
  expect(fake.calls.filter((c) => c.method === 'oauth.v2.access' && c.result === 'ok')).toHaveLength(2);
  expect(pending()).toBe(MAX_PENDING_PER_CLIENT);
});

it('behind a trusted proxy (TRUST_PROXY) each forwarded client has its own few links', async () => {
  const { base } = await startInstallFlow({
    trustProxy: { ranges: [{ address: '127.0.0.1', prefix: 32, family: 4 }] },
  });
  const install = async (forwardedFor: string) =>
    (
      await fetch(`${base}/slack/install`, {
        redirect: 'manual',
        headers: { 'x-forwarded-for': forwardedFor },
      })
    ).status;
  const flood: number[] = [];
  for (let i = 0; i < MAX_PENDING_PER_CLIENT + 3; i++) flood.push(await install('203.0.113.1'));
  expect(flood.filter((s) => s === 302)).toHaveLength(MAX_PENDING_PER_CLIENT);
  expect(flood.filter((s) => s === 429)).toHaveLength(3);
  // Another client behind the same proxy is not refused for the first one's links.
  expect(await install('203.0.113.2')).toBe(302);
  // A forged left part does not make a new client: the proxy appended the real one.
  expect(await install('198.51.100.7, 203.0.113.1')).toBe(429);
});
