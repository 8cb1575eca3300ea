import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { openStore } from './index.js';

// SQLite gives back what pruning freed in small steps (PRAGMA incremental_vacuum on a timer), and
// a file made before that setting is converted once when opened.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDb = () => {
  const d = mkdtempSync(join(tmpdir(), 'bridge-vacuum-'));
  dirs.push(d);
  return join(d, 'bridge.db');
};

it('pages freed by pruning go back to the file in small steps', async () => {
  const store = openStore(tempDb(), { checkIntervalMs: 0, vacuumEveryMs: 5 });
  const db = store.db;
  expect(db.pragma('auto_vacuum', { simple: true })).toBe(2);
  for (let i = 0; i < 5000; i++) await store.events.recordDelivery('slack', `ev-${i}-${'x'.repeat(100)}`, i);
  const pages = Number(db.pragma('page_count', { simple: true }));
  expect(await store.events.prune(10_000)).toBe(5000);
  // Bounded wait: each step frees 64 pages every 5 ms.
  for (let i = 0; i < 400 && Number(db.pragma('freelist_count', { simple: true })) > 0; i++)
    await new Promise((r) => setTimeout(r, 10));
  expect(Number(db.pragma('freelist_count', { simple: true }))).toBe(0);
  expect(Number(db.pragma('page_count', { simple: true }))).toBeLessThan(pages / 4);
  await store.close();
});

it('a file made without auto_vacuum is converted when opened', async () => {
  const path = tempDb();
  const old = new Database(path);
  old.exec('CREATE TABLE leftover (x INTEGER)');
  expect(old.pragma('auto_vacuum', { simple: true })).toBe(0);
  old.close();
  const store = openStore(path, { checkIntervalMs: 0 });
  expect(store.db.pragma('auto_vacuum', { simple: true })).toBe(2);
  await store.close();
});
