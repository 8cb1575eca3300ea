import { statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { createTestDatabase } from '../test/support/pg.js';

// Where a soak bridge keeps its data, and how big that is: SQLite's file with its WAL, or on
// PostgreSQL the total size of the bridge's tables (heap, indexes and TOAST; pg_database_size
// would add the ~7 MB every empty database has). The PostgreSQL database is the bench's own,
// made fresh for the run and dropped after it.

export type SoakStore = 'sqlite' | 'pg';

export interface SoakDb {
  /** Extra environment for the bridge (DATABASE_URL on PostgreSQL; SQLite uses DATABASE_PATH). */
  env: Record<string, string>;
  /** The data's size now, in MB. */
  sizeMb(dataDir: string): Promise<number>;
  close(): Promise<void>;
}

function fileMb(path: string): number {
  try {
    return statSync(path).size / 2 ** 20;
  } catch {
    return 0;
  }
}

const TABLES_SIZE = `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema')`;

export async function soakDb(store: SoakStore): Promise<SoakDb> {
  if (store === 'sqlite') {
    return {
      env: {},
      sizeMb: (dataDir) => {
        const db = join(dataDir, 'bridge.db');
        return Promise.resolve(fileMb(db) + fileMb(`${db}-wal`));
      },
      close: () => Promise.resolve(),
    };
  }
  const made = await createTestDatabase();
  const client = new pg.Client({ connectionString: made.url, connectionTimeoutMillis: 5000 });
  await client.connect();
  return {
    env: { DATABASE_URL: made.url },
    async sizeMb() {
      const r = await client.query<{ bytes: string }>(TABLES_SIZE);
      return Number(r.rows[0]?.bytes ?? 0) / 2 ** 20;
    },
    async close() {
      await client.end().catch(() => undefined);
      await made.drop();
    },
  };
}
