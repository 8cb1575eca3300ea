import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../store/sqlite/index.js';
import { dropSchema, PG_TEST_URL, pgSkipReason, testSchemaName } from '../../test/support/pg.js';
import {
  canDropRoot,
  distModule,
  isRoot,
  nobodysFolder,
  removeFolder,
  runAsNobody,
} from '../../test/support/unprivileged.js';
import { createPgStore } from '../store/pg/index.js';
import { checkDatabasePath, checkPostgres } from './database-check.js';

// The doctor's database row says why the database cannot be written, with a hint that fits.

let dir: string;
let path: string;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bridge-doctor-db-'));
  path = join(dir, 'bridge.db');
});
afterEach(async () => {
  chmodSync(dir, 0o700);
  rmSync(dir, { recursive: true, force: true });
});

describe('doctor: database', () => {
  it('passes a fresh path in a writable folder without creating anything', async () => {
    const row = await checkDatabasePath(path);
    expect(row).toMatchObject({
      status: 'ok',
      detail: `${path}: does not exist yet; start will create it (${dir} is writable)`,
    });
    expect(existsSync(path)).toBe(false);
    const deeper = join(dir, 'data', 'sub', 'bridge.db');
    expect((await checkDatabasePath(deeper)).detail).toContain(`with the missing folder ${join(dir, 'data', 'sub')}`);
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('passes an existing database: WAL, migrated, written', async () => {
    await openStore(path, { checkIntervalMs: 0 }).close();
    const row = await checkDatabasePath(path);
    expect(row.status).toBe('ok');
    expect(row.detail).toMatch(/^.*bridge\.db: writable, WAL, schema version [1-9]\d*$/);
  });

  it.skipIf(isRoot)('fails a fresh path in a folder this user cannot write, creating nothing', async () => {
    chmodSync(dir, 0o555);
    const row = await checkDatabasePath(join(dir, 'data', 'bridge.db'));
    expect(row).toMatchObject({
      status: 'FAIL',
      detail: `${join(dir, 'data', 'bridge.db')}: not writable: cannot create files in ${dir}`,
    });
    expect(row.hint).toMatch(/writable by this user/);
  });

  it('says "locked" when another process holds the write lock', async () => {
    await openStore(path, { checkIntervalMs: 0 }).close();
    const other = new Database(path);
    try {
      other.exec('BEGIN EXCLUSIVE');
      other.exec("INSERT INTO processed_events VALUES ('x', 'y', 1)");
      const row = await checkDatabasePath(path, { busyTimeoutMs: 50 });
      expect(row).toMatchObject({ status: 'FAIL', detail: `${path}: locked: database is locked` });
      expect(row.hint).toMatch(/another process holds a write lock/);
    } finally {
      other.close();
    }
  });

  it('says "corrupt" for a file that is not a database', async () => {
    writeFileSync(path, 'this is not a SQLite file, just some text that is long enough '.repeat(20));
    const row = await checkDatabasePath(path);
    expect(row).toMatchObject({ status: 'FAIL' });
    expect(row.detail).toMatch(/corrupt: file is not a database/);
    expect(row.hint).toMatch(/restore a backup/);
  });

  it.skipIf(isRoot)('says "not writable" for a read-only file or folder (as a normal user)', async () => {
    await openStore(path, { checkIntervalMs: 0 }).close();
    chmodSync(path, 0o444);
    const file = await checkDatabasePath(path);
    expect(file).toMatchObject({ status: 'FAIL' });
    expect(file.detail).toMatch(/not writable: /);
    expect(file.hint).toMatch(/writable by this user/);
    chmodSync(path, 0o644);
    rmSync(`${path}-wal`, { force: true });
    rmSync(`${path}-shm`, { force: true });
    chmodSync(dir, 0o555);
    const folder = await checkDatabasePath(path);
    expect(folder.status).toBe('FAIL');
    expect(folder.hint).toMatch(/writable by this user/);
  });

  // As root chmod stops nothing: the same scenario runs in a child process as nobody.
  it.skipIf(!canDropRoot)(
    'says "not writable" for a read-only file or folder (as nobody, when the tests run as root)',
    async () => {
      const home = nobodysFolder('bridge-doctor-nobody');
      try {
        const seen = runAsNobody<Record<string, unknown>>(
          home,
          `import { openStore } from '${distModule('store/sqlite/index.js')}';
import { checkDatabasePath } from '${distModule('doctor/database-check.js')}';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';`,
          `const dir = join(process.cwd(), 'data');
mkdirSync(dir);
const path = join(dir, 'bridge.db');
await openStore(path, { checkIntervalMs: 0 }).close();
chmodSync(path, 0o444);
const file = await checkDatabasePath(path);
chmodSync(path, 0o644);
rmSync(path + '-wal', { force: true });
rmSync(path + '-shm', { force: true });
chmodSync(dir, 0o555);
const folder = await checkDatabasePath(path);
chmodSync(dir, 0o755);
return { uid: process.getuid(), file, folder };`,
        );
        expect(seen.uid).toBe(65534);
        expect(seen.file).toMatchObject({
          status: 'FAIL',
          detail: expect.stringMatching(/not writable: /),
          hint: expect.stringMatching(/writable by this user/),
        });
        expect(seen.folder).toMatchObject({ status: 'FAIL', hint: expect.stringMatching(/writable by this user/) });
      } finally {
        removeFolder(home);
      }
      // The first run may build dist/ (tsc) for the child.
    },
    120_000,
  );
});

describe('doctor: database on PostgreSQL (DATABASE_URL)', async () => {
  const skip = await pgSkipReason();
  const schema = testSchemaName();
  const url = () => {
    const u = new URL(PG_TEST_URL);
    u.searchParams.set('options', `-c search_path=${schema}`);
    return u.toString();
  };
  afterEach(async () => {
    if (!skip) await dropSchema(schema);
  });

  it.skipIf(skip !== undefined)('asks for migrate on a database behind, then passes once migrated', async () => {
    const { default: pg } = await import('pg');
    const admin = new pg.Client({ connectionString: PG_TEST_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA "${schema}"`).finally(() => admin.end());

    const behind = await checkPostgres(url());
    expect(behind).toMatchObject({ check: 'database', status: 'FAIL' });
    expect(behind.detail).toMatch(/schema version 0, this release needs \d+: run assistant-bridge migrate/);
    expect(behind.hint).toMatch(/assistant-bridge migrate/);

    await (await createPgStore(PG_TEST_URL, { schema, checkIntervalMs: 0 })).close();
    const row = await checkPostgres(url());
    expect(row).toMatchObject({ check: 'database', status: 'ok' });
    expect(row.detail).toMatch(
      /^postgres(ql)?:\/\/\S+: PostgreSQL \d+\S*( \S+)*, writable, schema version \d+\nreplicas live: none$/,
    );
    // With replicas: the live ones and their last beat, and a gone one that left replies open.
    const store = await createPgStore(PG_TEST_URL, { schema, checkIntervalMs: 0 });
    await store.replicas.heartbeat('web-1', Date.now() - 2_000);
    await store.replicas.heartbeat('web-2', Date.now() - 60_000);
    const target = { place: { platform: 'slack' as const, channelId: 'C1' } };
    await store.inflight.begin({ platform: 'slack', eventId: 'e1', target, at: 0, owner: 'web-2' });
    await store.close();
    const withReplicas = await checkPostgres(url());
    expect(withReplicas.detail).toMatch(/\nreplicas live: web-1 \(2 s ago\); gone with open replies: web-2 \(1\)$/);
  });

  it('names an unreachable server without its password', async () => {
    const row = await checkPostgres('postgres://bridge:s3cret@127.0.0.1:1/bridge', { timeoutMs: 2000 });
    expect(row).toMatchObject({ check: 'database', status: 'FAIL' });
    expect(row.detail).toMatch(/^postgres:\/\/bridge@127\.0\.0\.1:1\/bridge: unreachable: /);
    expect(row.hint).toMatch(/up and reachable/);
    expect(JSON.stringify(row)).not.toContain('s3cret');
  });
});
