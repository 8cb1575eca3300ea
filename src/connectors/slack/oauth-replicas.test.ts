import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogLevel } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../../../test/fakes/slack/index.js';
import { dropSchema, PG_TEST_URL, pgSkipReason, testSchemaName } from '../../../test/support/pg.js';
import { silentLogger } from '../../logger.js';
import { createHttpServer, type HttpServer } from '../../server/http-server.js';
import { createMetrics } from '../../server/metrics.js';
import type { AsyncStore } from '../../store/ports.js';
import { openStore, type SqliteStore } from '../../store/sqlite/index.js';
import { createPgStore } from '../../store/pg/index.js';
import type { BoltLogger } from './app.js';
import { createInstallationStore } from './installation-store.js';
import { createOAuth, INSTALL_PATH, REDIRECT_PATH } from './oauth.js';
import { SingleUseStateStore, STATE_TTL_MS } from './oauth-state.js';

// Several replicas behind one URL: the install link is made by one, Slack's redirect reaches
// another. Each replica is its own store instance (its own connection or pool) on one database.

const quiet: BoltLogger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  setLevel: () => {},
  getLevel: () => LogLevel.INFO,
  setName: () => {},
};

describe('Slack OAuth across two replicas on one database (HTTP)', () => {
  let fake: FakeSlack | undefined;
  const servers: HttpServer[] = [];
  const stores: SqliteStore[] = [];
  let dir: string | undefined;

  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    for (const s of stores.splice(0)) await s.close();
    await fake?.close();
    fake = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** One replica: its own connection to the file, its own OAuth provider and HTTP server. */
  async function replica(path: string, clock: { now: number }) {
    const store = openStore(path, { checkIntervalMs: 0 });
    stores.push(store);
    const oauth = createOAuth({
      clientId: 'cid',
      clientSecret: 'csecret',
      stateSecret: 'state-secret',
      installationStore: createInstallationStore(store.installations),
      states: store.oauthStates,
      apiUrl: fake?.apiUrl ?? '',
      logger: quiet,
      now: () => clock.now,
    });
    const http = createHttpServer({
      host: '127.0.0.1',
      port: 0,
      logger: silentLogger,
      metrics: createMetrics({ defaultMetrics: false }),
      readiness: () => ({ ready: true, checks: {} }),
    });
    servers.push(http);
    http.mount(INSTALL_PATH, oauth.listener);
    http.mount(REDIRECT_PATH, oauth.listener);
    const { port } = await http.listen();
    return { base: `http://127.0.0.1:${port}`, store };
  }

  /** Opens an install link on `base`; returns Slack's redirect to whichever replica is given. */
  async function begin(base: string) {
    const res = await fetch(`${base}${INSTALL_PATH}`, { redirect: 'manual' });
    const state = new URL(res.headers.get('location') ?? '').searchParams.get('state') ?? '';
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    return (to: string, code = 'good-code') =>
      fetch(`${to}${REDIRECT_PATH}?code=${code}&state=${encodeURIComponent(state)}`, {
        headers: { cookie },
        redirect: 'manual',
      });
  }

  it('a link made by one replica is completed by the other, once', async () => {
    fake = await startFakeSlack({ limits: {}, oauth: { clientId: 'cid', clientSecret: 'csecret' } });
    dir = mkdtempSync(join(tmpdir(), 'oauth-replicas-'));
    const path = join(dir, 'bridge.db');
    const clock = { now: 1_000_000 };
    const a = await replica(path, clock);
    const b = await replica(path, clock);

    const redirect = await begin(a.base);
    const done = await redirect(b.base);
    expect(done.status).toBe(200);
    expect(await a.store.installations.count()).toBe(1);
    // A replay is refused wherever it lands.
    for (const to of [a.base, b.base]) {
      const again = await redirect(to);
      expect(again.status).toBe(400);
      expect(await again.text()).toContain('expired or was already used');
    }

    // Expiry is the same for every replica.
    const late = await begin(b.base);
    clock.now += STATE_TTL_MS + 1;
    expect((await late(a.base)).status).toBe(400);
    expect(await b.store.installations.count()).toBe(1);
  });
});

const pgSkip = await pgSkipReason();
if (pgSkip) console.log(`PostgreSQL OAuth state tests skipped: ${pgSkip}`);

interface TwoReplicas {
  stores: [AsyncStore, AsyncStore];
  dispose(): Promise<void>;
}

const backends: [string, () => Promise<TwoReplicas>, boolean][] = [
  [
    'SQLite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'oauth-states-'));
      const open = () => openStore(join(dir, 'bridge.db'), { checkIntervalMs: 0 });
      const stores: [AsyncStore, AsyncStore] = [open(), open()];
      return {
        stores,
        async dispose() {
          for (const s of stores) await s.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
    false,
  ],
  [
    'PostgreSQL',
    async () => {
      const schema = testSchemaName();
      const open = () => createPgStore(PG_TEST_URL, { schema, checkIntervalMs: 0, poolMax: 2 });
      const first = await open(); // migrates; the second finds the schema current
      const stores: [AsyncStore, AsyncStore] = [first, await open()];
      return {
        stores,
        async dispose() {
          for (const s of stores) await s.close();
          await dropSchema(schema);
        },
      };
    },
    pgSkip !== undefined,
  ],
];

describe.each(backends)('SingleUseStateStore over the store’s oauthStates: %s', (_name, make, skip) => {
  const installOptions = { scopes: ['app_mentions:read', 'chat:write'] };
  let replicas: TwoReplicas | undefined;
  afterEach(async () => {
    await replicas?.dispose();
    replicas = undefined;
  });

  it.skipIf(skip)('a state issued through one store instance is consumed through another, once', async () => {
    replicas = await make();
    const [one, two] = replicas.stores.map(
      (s) => new SingleUseStateStore({ states: s.oauthStates, installOptions, now: () => 5000 }),
    ) as [SingleUseStateStore, SingleUseStateStore];
    const state = await one.generateStateParam(installOptions, new Date());
    expect(await two.verifyStateParam(new Date(), state)).toEqual(installOptions);
    await expect(one.verifyStateParam(new Date(), state)).rejects.toThrow(/already used/);
    await expect(two.verifyStateParam(new Date(), state)).rejects.toThrow(/already used/);

    // The same redirect reaching both at once (a retry through the load balancer): one wins.
    const raced = await two.generateStateParam(installOptions, new Date());
    const results = await Promise.allSettled([
      one.verifyStateParam(new Date(), raced),
      two.verifyStateParam(new Date(), raced),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  });
});
