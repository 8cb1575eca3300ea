import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../logger.js';
import { openStore, type SqliteStore, type StoreHealth } from '../store/sqlite/index.js';
import { createHttpServer, type HttpServer } from './http-server.js';
import { createMetrics } from './metrics.js';
import { healthCheck, notReady, readinessFrom } from './readiness.js';

describe('readinessFrom', () => {
  it('is ready only when every check returns true', async () => {
    let connected = false;
    const readiness = readinessFrom({ database: () => true, discord: () => connected || 'gateway not connected' });
    expect(readiness()).toEqual({ ready: false, checks: { database: true, discord: 'gateway not connected' } });
    connected = true;
    expect(readiness()).toEqual({ ready: true, checks: { database: true, discord: true } });
  });

  it('turns a throwing check into a not-ready reason', async () => {
    const readiness = readinessFrom({
      database: () => {
        throw new Error('database closed');
      },
    });
    const report = readiness();
    expect(report).toEqual({ ready: false, checks: { database: 'database closed' } });
    expect(notReady(report.checks)).toEqual(['database']);
  });

  it('reads a health source: true, or its reason', async () => {
    let health: { ok: boolean; reason?: string } = { ok: true };
    const check = healthCheck({ health: () => health });
    expect(check()).toBe(true);
    health = { ok: false, reason: 'locked: database is locked' };
    expect(check()).toBe('locked: database is locked');
    health = { ok: false };
    expect(check()).toBe(false);
  });
});

// The store's health through the real HTTP server, as an orchestrator polling /readyz sees it.
describe('/readyz and the database', () => {
  let dir: string | undefined;
  let store: SqliteStore | undefined;
  let server: HttpServer | undefined;
  let other: Database.Database | undefined;
  afterEach(async () => {
    await server?.close();
    if (other?.open) other.close();
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = store = server = other = undefined;
  });

  async function start() {
    dir = mkdtempSync(join(tmpdir(), 'bridge-readyz-'));
    const path = join(dir, 'bridge.db');
    // A fast check: what runs every 5 s in production runs every 20 ms here.
    store = openStore(path, { checkIntervalMs: 20, checkRetryMs: 10 });
    server = createHttpServer({
      host: '127.0.0.1',
      port: 0,
      logger: silentLogger,
      metrics: createMetrics({ defaultMetrics: false }),
      readiness: readinessFrom({ database: healthCheck(store) }),
    });
    const { port } = await server.listen();
    const readyz = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      return { status: res.status, body: (await res.json()) as unknown };
    };
    return { path, store, readyz };
  }

  const change = (s: SqliteStore, want: (h: StoreHealth) => boolean) =>
    new Promise<StoreHealth>((resolve) => {
      const off = s.onHealthChange((h) => {
        if (want(h)) {
          off();
          resolve(h);
        }
      });
    });

  it('turns 503 naming the database when it becomes read-only, and 200 again after', async () => {
    const { store: s, readyz } = await start();
    expect(await readyz()).toEqual({ status: 200, body: { status: 'ready', checks: { database: true } } });

    const down = change(s, (h) => !h.ok);
    s.db.pragma('query_only = ON'); // works as root too, where chmod would not stop a write
    await down;
    expect(await readyz()).toEqual({
      status: 503,
      body: {
        status: 'not_ready',
        notReady: ['database'],
        checks: { database: 'not writable: attempt to write a readonly database' },
      },
    });

    const up = change(s, (h) => h.ok);
    s.db.pragma('query_only = OFF');
    await up;
    expect((await readyz()).status).toBe(200);
  });

  it('turns 503 when the database file is deleted', async () => {
    const { path, store: s, readyz } = await start();
    const down = change(s, (h) => !h.ok);
    unlinkSync(path);
    await down;
    expect(await readyz()).toEqual({
      status: 503,
      body: { status: 'not_ready', notReady: ['database'], checks: { database: `missing: ${path} was deleted` } },
    });
  });

  it('turns 503 while another process holds the write lock, without stalling /readyz', async () => {
    const { path, store: s, readyz } = await start();
    other = new Database(path);
    const down = change(s, (h) => !h.ok);
    other.exec('BEGIN EXCLUSIVE');
    other.exec("INSERT INTO processed_events VALUES ('x', 'y', 1)");
    await down;
    expect(await readyz()).toMatchObject({ status: 503, body: { checks: { database: 'locked: database is locked' } } });
    const up = change(s, (h) => h.ok);
    other.exec('ROLLBACK');
    await up;
    expect((await readyz()).status).toBe(200);
  });
});
