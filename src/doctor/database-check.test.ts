import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../store/index.js';
import { checkDatabasePath } from './database-check.js';

// The doctor's database row says why the database cannot be written, with a hint that fits.

const isRoot = process.getuid?.() === 0;
let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bridge-doctor-db-'));
  path = join(dir, 'bridge.db');
});
afterEach(() => {
  chmodSync(dir, 0o700);
  rmSync(dir, { recursive: true, force: true });
});

describe('doctor: database', () => {
  it('passes a fresh path: created, WAL, migrated, written', () => {
    const row = checkDatabasePath(path);
    expect(row.status).toBe('ok');
    expect(row.detail).toMatch(/^.*bridge\.db: writable, WAL, schema version [1-9]\d*$/);
  });

  it('says "locked" when another process holds the write lock', () => {
    openStore(path, { probeIntervalMs: 0 }).close();
    const other = new Database(path);
    try {
      other.exec('BEGIN EXCLUSIVE');
      other.exec("INSERT INTO processed_events VALUES ('x', 'y', 1)");
      const row = checkDatabasePath(path, { busyTimeoutMs: 50 });
      expect(row).toMatchObject({ status: 'FAIL', detail: `${path}: locked: database is locked` });
      expect(row.hint).toMatch(/another process holds a write lock/);
    } finally {
      other.close();
    }
  });

  it('says "corrupt" for a file that is not a database', () => {
    writeFileSync(path, 'this is not a SQLite file, just some text that is long enough '.repeat(20));
    const row = checkDatabasePath(path);
    expect(row).toMatchObject({ status: 'FAIL' });
    expect(row.detail).toMatch(/corrupt: file is not a database/);
    expect(row.hint).toMatch(/restore a backup/);
  });

  it.skipIf(isRoot)('says "not writable" for a read-only file or folder (as a normal user)', () => {
    openStore(path, { probeIntervalMs: 0 }).close();
    chmodSync(path, 0o444);
    const file = checkDatabasePath(path);
    expect(file).toMatchObject({ status: 'FAIL' });
    expect(file.detail).toMatch(/not writable: /);
    expect(file.hint).toMatch(/writable by this user/);
    chmodSync(path, 0o644);
    rmSync(`${path}-wal`, { force: true });
    rmSync(`${path}-shm`, { force: true });
    chmodSync(dir, 0o555);
    const folder = checkDatabasePath(path);
    expect(folder.status).toBe('FAIL');
    expect(folder.hint).toMatch(/writable by this user/);
  });
});
