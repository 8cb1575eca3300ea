import { chmodSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Place } from '../../core/ports.js';
import {
  classifyStoreError,
  openStore,
  type OpenStoreOptions,
  type SqliteStore,
  type StoreHealth,
  StoreUnavailableError,
  type Timers,
} from './index.js';
import {
  canDropRoot,
  distModule,
  isRoot,
  nobodysFolder,
  removeFolder,
  runAsNobody,
} from '../../../test/support/unprivileged.js';

// Storage failures a running bridge meets: each must make the store unhealthy (what /readyz
// shows) and make writes fail with a recognisable error, never drop them silently.
// Tests may run as root, where chmod does not stop writes; those cases use other means.

let dir: string;
const opened: SqliteStore[] = [];
const others: Database.Database[] = [];

const open = (opts: OpenStoreOptions = {}, path = join(dir, 'bridge.db')) => {
  // No periodic check unless a test asks: each test drives check() itself.
  const s = openStore(path, { checkIntervalMs: 0, ...opts });
  opened.push(s);
  return s;
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bridge-health-'));
});
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  for (const d of others.splice(0)) if (d.open) d.close();
  chmodSync(dir, 0o700);
  rmSync(dir, { recursive: true, force: true });
});

const place: Place = { platform: 'slack', workspaceId: 'T1', channelId: 'C1', threadId: '1.1' };
const put = (s: SqliteStore, lastUsedAt = 1) =>
  s.conversations.put({ place, botId: 'b', flavor: 'a', upstreamId: 'u', createdAt: 1, lastUsedAt });

async function thrown(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

function nextChange(s: SqliteStore, want: (h: StoreHealth) => boolean): Promise<StoreHealth> {
  return new Promise((resolve) => {
    const off = s.onHealthChange((h) => {
      if (want(h)) {
        off();
        resolve(h);
      }
    });
  });
}

describe('store health', () => {
  it('is healthy after a normal open, and closed after close', async () => {
    const s = open();
    expect(s.health()).toEqual({ ok: true });
    expect(await s.check()).toEqual({ ok: true });
    await s.close();
    expect(s.health()).toMatchObject({ ok: false, kind: 'closed' });
  });

  it('a write refused as read-only marks the store unhealthy at once; a check restores it', async () => {
    const s = open();
    s.db.pragma('query_only = ON'); // what SQLite does on a file it could only open read-only
    const err = await thrown(() => put(s));
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect(err).toMatchObject({ code: 'STORE_UNAVAILABLE', kind: 'readonly' });
    expect(s.health()).toEqual({
      ok: false,
      kind: 'readonly',
      reason: 'not writable: attempt to write a readonly database',
    });
    // Reads still answer; writes fail at once while unhealthy, even if SQLite would take them.
    expect(await s.conversations.get(place)).toBeUndefined();
    s.db.pragma('query_only = OFF');
    await expect(s.events.recordDelivery('slack', 'e1', 1)).rejects.toThrow(StoreUnavailableError);
    expect(await s.check()).toEqual({ ok: true });
    await put(s);
    expect((await s.conversations.get(place))?.upstreamId).toBe('u');
  });

  it('reports a file that became read-only, whether found by a write or by the check', async () => {
    const s = open();
    s.db.pragma('query_only = ON');
    expect(await s.check()).toMatchObject({ ok: false, kind: 'readonly' });
  });

  it.skipIf(isRoot)('reports a file or folder chmod-ed read-only (as a normal user)', async () => {
    const path = join(dir, 'bridge.db');
    await open().close();
    chmodSync(path, 0o444);
    const s = open();
    expect(s.health()).toMatchObject({ ok: false, kind: 'readonly' });
    expect(s.health().reason).toMatch(/^not writable: /);
    await expect(put(s)).rejects.toThrow(StoreUnavailableError);
    await s.close();
    // The read-only open left its -wal and -shm files read-only too: not writable yet.
    chmodSync(path, 0o644);
    const u = open();
    expect(u.health().reason).toMatch(/bridge\.db-(wal|shm) is read-only/);
    await u.close(); // SQLite shares one file descriptor per file among a process's connections
    chmodSync(`${path}-wal`, 0o644);
    chmodSync(`${path}-shm`, 0o644);
    const t = open();
    expect(t.health()).toEqual({ ok: true });
    chmodSync(dir, 0o555);
    expect(await t.check()).toMatchObject({ ok: false, kind: 'readonly' });
    expect(t.health().reason).toMatch(/folder .* read-only/);
  });

  // As root chmod stops nothing: the same scenario runs in a child process as nobody.
  it.skipIf(!canDropRoot)(
    'reports a file or folder chmod-ed read-only (as nobody, when the tests run as root)',
    () => {
      const home = nobodysFolder('bridge-health-nobody');
      try {
        const seen = runAsNobody<Record<string, unknown>>(
          home,
          `import { openStore } from '${distModule('store/sqlite/index.js')}';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';`,
          `const path = join(process.cwd(), 'data', 'bridge.db');
const { mkdirSync } = await import('node:fs');
mkdirSync(join(process.cwd(), 'data'));
const open = () => openStore(path, { checkIntervalMs: 0 });
const place = { platform: 'slack', workspaceId: 'T1', channelId: 'C1', threadId: '1.1' };
const put = (s) => s.conversations.put({ place, botId: 'b', flavor: 'a', upstreamId: 'u', createdAt: 1, lastUsedAt: 1 });
await open().close();
chmodSync(path, 0o444);
const s = open();
const fileHealth = s.health();
let putError;
try { await put(s); } catch (err) { putError = { name: err.constructor.name, code: err.code, kind: err.kind }; }
await s.close();
chmodSync(path, 0o644);
const u = open();
const sidecarHealth = u.health();
await u.close();
chmodSync(path + '-wal', 0o644);
chmodSync(path + '-shm', 0o644);
const t = open();
const restored = t.health();
chmodSync(join(process.cwd(), 'data'), 0o555);
const folderCheck = await t.check();
await t.close();
chmodSync(join(process.cwd(), 'data'), 0o755);
return { uid: process.getuid(), fileHealth, putError, sidecarHealth, restored, folderCheck };`,
        );
        expect(seen.uid).toBe(65534);
        expect(seen.fileHealth).toMatchObject({
          ok: false,
          kind: 'readonly',
          reason: expect.stringMatching(/^not writable: /),
        });
        expect(seen.putError).toEqual({ name: 'StoreUnavailableError', code: 'STORE_UNAVAILABLE', kind: 'readonly' });
        expect(seen.sidecarHealth).toMatchObject({
          ok: false,
          reason: expect.stringMatching(/bridge\.db-(wal|shm) is read-only/),
        });
        expect(seen.restored).toEqual({ ok: true });
        expect(seen.folderCheck).toMatchObject({
          ok: false,
          kind: 'readonly',
          reason: expect.stringMatching(/folder .* read-only/),
        });
      } finally {
        removeFolder(home);
      }
      // The first run may build dist/ (tsc) for the child.
    },
    120_000,
  );

  it('reports a deleted or replaced database file (SQLite would keep writing to the lost inode)', async () => {
    const path = join(dir, 'bridge.db');
    const s = open();
    unlinkSync(path);
    expect(await s.check()).toEqual({ ok: false, kind: 'missing', reason: `missing: ${path} was deleted` });
    const err = await thrown(() => put(s));
    expect(err).toMatchObject({ code: 'STORE_UNAVAILABLE', kind: 'missing' });

    const t = open({}, join(dir, 'other.db'));
    writeFileSync(join(dir, 'impostor.db'), '');
    renameSync(join(dir, 'impostor.db'), join(dir, 'other.db'));
    expect(await t.check()).toMatchObject({ ok: false, kind: 'missing' });
    expect(t.health().reason).toMatch(/replaced/);
  });

  it('reports a full disk (SQLITE_FULL)', async () => {
    const s = open();
    // The connection may not grow the file: the same error a full disk gives.
    s.db.pragma(`max_page_count = ${String(s.db.pragma('page_count', { simple: true }))}`);
    const big = JSON.stringify({ blob: 'x'.repeat(200_000) });
    const err = await thrown(() => s.installations.save({ teamId: 'T1', enterpriseId: undefined }, 'U1', big, 1));
    expect(err).toMatchObject({ code: 'STORE_UNAVAILABLE', kind: 'full' });
    expect(s.health()).toEqual({ ok: false, kind: 'full', reason: 'disk full: database or disk is full' });
  });

  it('a write lock held by another connection fails a write fast instead of blocking the loop', async () => {
    const path = join(dir, 'bridge.db');
    const s = open();
    const other = new Database(path);
    others.push(other);
    other.exec('BEGIN EXCLUSIVE');
    other.exec("INSERT INTO processed_events VALUES ('x', 'y', 1)");

    // The event loop keeps turning while the store is in use: count its turns around the writes.
    let turns = 0;
    let spinning = true;
    const spin = () => {
      turns++;
      if (spinning) setImmediate(spin);
    };
    setImmediate(spin);
    await new Promise((r) => setImmediate(r));

    // The serving connection waits at most 100 ms for a lock (open and migration use 5 s): checked
    // as SQLite's setting, not with a stopwatch.
    expect(s.db.pragma('busy_timeout', { simple: true })).toBe(100);
    const err = await thrown(() => s.events.recordDelivery('slack', 'e1', 1));
    expect(err).toMatchObject({ code: 'STORE_UNAVAILABLE', kind: 'locked' });
    expect((err as Error).cause).toBeDefined(); // this one reached SQLite and waited
    expect(s.health()).toEqual({ ok: false, kind: 'locked', reason: 'locked: database is locked' });
    // The next writes do not even wait: they fail before reaching SQLite (no SQLite error as cause).
    for (let i = 0; i < 20; i++) {
      const next = await thrown(() => put(s, i));
      expect(next).toBeInstanceOf(StoreUnavailableError);
      expect((next as Error).cause).toBeUndefined();
    }
    const before = turns;
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(turns).toBeGreaterThan(before);
    spinning = false;

    // Reads in WAL mode do not wait for the writer.
    expect(await s.conversations.get(place)).toBeUndefined();
    expect(await s.check()).toMatchObject({ ok: false, kind: 'locked' });
    other.exec('ROLLBACK');
    expect(await s.check()).toEqual({ ok: true });
    expect(await s.events.recordDelivery('slack', 'e1', 1)).toBe(true);
  });

  it('errors about the data (a constraint) leave the store healthy and pass through as they are', async () => {
    const s = open();
    const id = await s.inflight.begin({
      platform: 'slack',
      eventId: 'e',
      target: { place: { platform: 'slack', channelId: 'C' }, data: {} },
      at: 1,
      owner: '',
    });
    // @ts-expect-error: a state the schema's CHECK refuses
    const err = await thrown(() => s.inflight.finish(id, 'bogus', 2));
    expect(err).not.toBeInstanceOf(StoreUnavailableError);
    expect(err).toMatchObject({ code: 'SQLITE_CONSTRAINT_CHECK' });
    expect(s.health()).toEqual({ ok: true });
  });

  it('checks periodically on its own (real timers, short interval) and recovers', async () => {
    const path = join(dir, 'bridge.db');
    const s = open({ checkIntervalMs: 20, checkRetryMs: 10 });
    const other = new Database(path);
    others.push(other);
    other.exec('BEGIN EXCLUSIVE');
    other.exec("INSERT INTO processed_events VALUES ('x', 'y', 1)");
    expect((await nextChange(s, (h) => !h.ok)).kind).toBe('locked');
    const back = nextChange(s, (h) => h.ok);
    other.exec('ROLLBACK');
    await back;
    unlinkSync(path);
    expect(await nextChange(s, (h) => !h.ok)).toMatchObject({ kind: 'missing' });
  });

  it('checks every 5 s by default and retries sooner, with backoff, while unhealthy', async () => {
    const scheduled: { fn: () => void; ms: number }[] = [];
    const timers: Timers = {
      setTimeout: (fn, ms) => scheduled.push({ fn, ms }),
      clearTimeout: () => undefined,
    };
    const s = openStore(join(dir, 'bridge.db'), { timers }); // the default interval
    opened.push(s);
    // The monitor's check answers with a promise (one monitor for both backends): a fired timer's
    // check and its rescheduling settle in microtasks, all run before the next macrotask.
    const settled = () => new Promise<void>((resolve) => setImmediate(resolve));
    const runNext = async () => {
      const next = scheduled.pop();
      if (!next) throw new Error('nothing scheduled');
      next.fn();
      await settled();
      return next.ms;
    };
    expect(scheduled.map((t) => t.ms)).toEqual([5000]);
    s.db.pragma('query_only = ON');
    await expect(put(s)).rejects.toThrow(StoreUnavailableError);
    // The failure rescheduled the check: 250 ms, then doubling while it keeps failing.
    expect(scheduled.at(-1)?.ms).toBe(250);
    expect(await runNext()).toBe(250);
    expect(await runNext()).toBe(500);
    expect(await runNext()).toBe(1000);
    // At most 2 s apart while unhealthy: messages held in an outage wait for its return.
    expect(await runNext()).toBe(2000);
    expect(await runNext()).toBe(2000);
    s.db.pragma('query_only = OFF');
    await runNext();
    expect(s.health().ok).toBe(true);
    expect(scheduled.at(-1)?.ms).toBe(5000);
  });

  it('classifies SQLite error codes, extended ones by their primary code', async () => {
    const e = (code: string, message = 'm') => Object.assign(new Error(message), { code });
    expect(classifyStoreError(e('SQLITE_BUSY_SNAPSHOT'))?.kind).toBe('locked');
    expect(classifyStoreError(e('SQLITE_READONLY_DBMOVED'))?.kind).toBe('readonly');
    expect(classifyStoreError(e('SQLITE_IOERR_WRITE', 'disk I/O error'))?.reason).toBe('I/O error: disk I/O error');
    expect(classifyStoreError(e('SQLITE_CONSTRAINT_UNIQUE'))).toBeUndefined();
    expect(classifyStoreError(new TypeError('The database connection is not open'))?.kind).toBe('closed');
    expect(classifyStoreError(new Error('plain'))).toBeUndefined();
  });
});
