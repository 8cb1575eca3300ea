import { mkdtempSync, rmSync, writeFileSync, mkdirSync, readdirSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Place } from '../../core/ports.js';
import { defaultMigrationsDir, loadMigrations } from '../migrate.js';
import { currentVersion, migrate } from './migrate.js';
import { MigrationError, openDatabase, openStore, type SqliteStore } from './index.js';

let dir: string;
const opened: SqliteStore[] = [];
const open = (path: string, opts = {}) => {
  const s = openStore(path, opts);
  opened.push(s);
  return s;
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bridge-store-'));
});
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

const place: Place = { platform: 'slack', workspaceId: 'T1', channelId: 'C1', threadId: '171.5' };

describe('store', () => {
  it('creates the folder, uses WAL and migrates a fresh database', async () => {
    const s = open(join(dir, 'nested', 'deeper', 'bridge.db'));
    expect(s.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(s.db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(currentVersion(s.db)).toBe(readdirSync(defaultMigrationsDir()).filter((f) => f.endsWith('.sql')).length);
  });

  it('keeps conversation mappings across a reopen of the file', async () => {
    const path = join(dir, 'bridge.db');
    const a = open(path);
    await a.conversations.put({ place, botId: 'bot1', flavor: 'b', upstreamId: 'sess-1', createdAt: 1, lastUsedAt: 2 });
    await a.conversations.touch(place, 5);
    await a.close();
    const b = open(path);
    expect(await b.conversations.get(place)).toEqual({
      place,
      botId: 'bot1',
      flavor: 'b',
      upstreamId: 'sess-1',
      createdAt: 1,
      lastUsedAt: 5,
    });
    await b.conversations.put({
      place,
      botId: 'bot1',
      flavor: 'a',
      upstreamId: undefined,
      createdAt: 7,
      lastUsedAt: 7,
    });
    expect((await b.conversations.get(place))?.upstreamId).toBeUndefined();
    await b.conversations.delete(place);
    expect(await b.conversations.get(place)).toBeUndefined();
    // A place without workspace or thread is a different key from one with them.
    const dm: Place = { platform: 'discord', channelId: 'D1' };
    await b.conversations.put({ place: dm, botId: 'x', flavor: 'a', upstreamId: 'c', createdAt: 1, lastUsedAt: 1 });
    expect((await b.conversations.get(dm))?.place).toEqual(dm);
  });

  it('marks an event seen once and prunes old ones', async () => {
    const s = open(join(dir, 'bridge.db'));
    expect(await s.events.recordDelivery('slack', 'C1:1.1', 1000)).toBe(true);
    expect(await s.events.recordDelivery('slack', 'C1:1.1', 1001)).toBe(false);
    expect(await s.events.recordDelivery('discord', 'C1:1.1', 1001)).toBe(true);
    expect(await s.events.prune(1001)).toBe(1);
    expect(await s.events.recordDelivery('slack', 'C1:1.1', 2000)).toBe(true);
  });

  it('tracks replies in flight across a reopen', async () => {
    const path = join(dir, 'bridge.db');
    const a = open(path);
    const target = { place: { platform: 'discord' as const, channelId: 'C9' }, data: { mode: 'thread' } };
    const id = await a.inflight.begin({ platform: 'discord', eventId: 'm1', target, at: 10, owner: '' });
    await a.inflight.progress(id, ['111', '112'], 'half a reply', 11);
    await a.inflight.setUpstreamId(id, 'conv_1');
    const done = await a.inflight.begin({
      platform: 'slack',
      eventId: 'm2',
      target: { ...target, place: { platform: 'slack', channelId: 'C9' } },
      at: 10,
      owner: '',
    });
    await a.inflight.finish(done, 'done', 12);
    await a.close();
    const b = open(path);
    const open1 = await b.inflight.listOpen();
    expect(open1).toHaveLength(1);
    expect(open1[0]).toMatchObject({
      id,
      messageIds: ['111', '112'],
      lastText: 'half a reply',
      upstreamId: 'conv_1',
      target,
    });
    expect(await b.inflight.listOpen('slack')).toHaveLength(0);
    expect(await b.inflight.prune(100)).toBe(1);
    await b.inflight.finish(id, 'interrupted', 20);
    expect(await b.inflight.listOpen()).toHaveLength(0);
  });

  it('reads reply targets of rows written before targets carried a place', async () => {
    const path = join(dir, 'bridge.db');
    await open(path).close();
    // The flat shape a running deployment has in its table.
    const db = new Database(path);
    const flat = { platform: 'slack', workspaceId: 'T1', channelId: 'C1', threadId: '171.5', data: { mode: 'native' } };
    db.prepare(
      `INSERT INTO replies_in_flight (platform, event_id, target, started_at, updated_at) VALUES ('slack', 'C1:1', ?, 1, 1)`,
    ).run(JSON.stringify(flat));
    db.close();
    expect((await open(path).inflight.listOpen())[0]?.target).toEqual({
      place: { platform: 'slack', workspaceId: 'T1', channelId: 'C1', threadId: '171.5' },
      data: { mode: 'native' },
    });
  });

  it('stores, finds and deletes Slack installations', async () => {
    const s = open(join(dir, 'bridge.db'));
    await s.installations.save({ teamId: 'T1', enterpriseId: undefined }, 'U1', '{"a":1}', 1);
    await s.installations.save({ teamId: 'T1', enterpriseId: undefined }, 'U2', '{"a":2}', 2);
    expect(await s.installations.find({ teamId: 'T1', enterpriseId: undefined })).toBe('{"a":2}');
    expect(await s.installations.count()).toBe(1);
    expect(await s.installations.delete({ teamId: 'T1', enterpriseId: undefined })).toBe(1);
    expect(await s.installations.find({ teamId: 'T1', enterpriseId: undefined })).toBeUndefined();
  });

  it('refuses a database newer than the code', async () => {
    const path = join(dir, 'bridge.db');
    open(path)
      .db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, ?, 0)')
      .run('9999_future');
    expect(() => openStore(path)).toThrow(MigrationError);
    expect(() => openStore(path)).toThrow(/newer than this release/);
  });

  it('applies a new migration on reopen, and rolls back a failing one', async () => {
    const migrations = join(dir, 'migrations');
    mkdirSync(migrations);
    // The SQL files only: migrations/postgres/ is PostgreSQL's, which SQLite's loader never reads.
    for (const f of readdirSync(defaultMigrationsDir()).filter((n) => n.endsWith('.sql')))
      copyFileSync(join(defaultMigrationsDir(), f), join(migrations, f));
    const path = join(dir, 'bridge.db');
    const before = currentVersion(open(path, { migrationsDir: migrations }).db);
    const next = String(before + 1).padStart(4, '0');
    writeFileSync(join(migrations, `${next}_bad.sql`), 'CREATE TABLE t_ok (x); CREATE TABLE t_ok (x);');
    expect(() => openStore(path, { migrationsDir: migrations })).toThrow(/failed/);
    const check = open(path, { migrate: false });
    expect(currentVersion(check.db)).toBe(before);
    expect(check.db.prepare("SELECT name FROM sqlite_master WHERE name = 't_ok'").get()).toBeUndefined();
    writeFileSync(join(migrations, `${next}_good.sql`), 'CREATE TABLE t_ok (x);');
    rmSync(join(migrations, `${next}_bad.sql`));
    expect(currentVersion(open(path, { migrationsDir: migrations }).db)).toBe(before + 1);
  });

  it('keeps a mapping written before the flavor column was renamed from form (migration 0009)', async () => {
    const path = join(dir, 'bridge.db');
    const old = openDatabase(path);
    migrate(
      old,
      loadMigrations().filter((m) => m.version <= 8),
    );
    old
      .prepare(
        `INSERT INTO conversations (place_key, platform, workspace_id, channel_id, thread_id, bot_id, form, upstream_id, created_at, last_used_at)
         VALUES ('slack:T1:C1:171.5', 'slack', 'T1', 'C1', '171.5', 'bot1', 'b', 'sess-1', 1, 2)`,
      )
      .run();
    old.close();
    expect(await open(path).conversations.get(place)).toEqual({
      place,
      botId: 'bot1',
      flavor: 'b',
      upstreamId: 'sess-1',
      createdAt: 1,
      lastUsedAt: 2,
    });
  });
});
