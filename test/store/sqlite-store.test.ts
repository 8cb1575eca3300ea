import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { AsyncStore } from '../../src/store/ports.js';
import { loadMigrations, openStore } from '../../src/store/sqlite/index.js';
import { migrate } from '../../src/store/sqlite/migrate.js';
import { storeContract, type TestDatabase } from './contract.js';
import { replicaContract } from './contract-replicas.js';

// The async store port on SQLite: the shared contract, each test on its own file; a second
// `open` is a second connection to that file.

async function sqliteDatabase(): Promise<TestDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-async-store-'));
  const opened: AsyncStore[] = [];
  return {
    async open() {
      const store = openStore(join(dir, 'bridge.db'), { checkIntervalMs: 0 });
      opened.push(store);
      return store;
    },
    async dispose() {
      for (const s of opened) await s.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

storeContract('SQLite', sqliteDatabase);

describe('SQLite migration 0004 (replicas)', () => {
  it('keeps replies written before it, owned by the single replica of old', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bridge-0004-'));
    try {
      const path = join(dir, 'bridge.db');
      const db = new Database(path);
      const all = loadMigrations();
      migrate(
        db,
        all.filter((m) => m.version < 4),
      );
      db.prepare(
        `INSERT INTO replies_in_flight (platform, event_id, target, started_at, updated_at)
         VALUES ('slack', 'old', '{"place":{"platform":"slack","channelId":"C1"}}', 1, 1)`,
      ).run();
      db.close();

      const store = openStore(path, { checkIntervalMs: 0 });
      try {
        expect(await store.schemaVersion()).toBe(all.at(-1)?.version);
        expect(await store.inflight.listOpenOwnedBy([''])).toMatchObject([{ eventId: 'old', owner: '' }]);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

replicaContract('SQLite', sqliteDatabase);
