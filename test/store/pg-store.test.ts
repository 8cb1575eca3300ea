import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { AsyncStore } from '../../src/store/ports.js';
import { MigrationError } from '../../src/store/migrate.js';
import { classifyPgError, createPgStore, describePgUrl, loadPgMigrations } from '../../src/store/pg/index.js';
import { dropSchema, PG_TEST_URL, pgSkipReason, testSchemaName } from '../support/pg.js';
import { storeContract, type TestDatabase } from './contract.js';
import { replicaContract } from './contract-replicas.js';

// The async store port on PostgreSQL: the shared contract, each test in its own schema; a second
// `open` is a second pool (another replica). Then what only PostgreSQL has: migrations under an
// advisory lock when replicas start together.

const skip = await pgSkipReason();
if (skip) console.log(`PostgreSQL store tests skipped: ${skip}`);

async function pgDatabase(): Promise<TestDatabase> {
  const schema = testSchemaName();
  const opened: AsyncStore[] = [];
  return {
    async open() {
      const store = await createPgStore(PG_TEST_URL, { schema, checkIntervalMs: 0, poolMax: 3 });
      opened.push(store);
      return store;
    },
    async dispose() {
      for (const s of opened) await s.close();
      await dropSchema(schema);
    },
  };
}

storeContract('PostgreSQL', pgDatabase, { skip: skip !== undefined });

describe.skipIf(skip !== undefined)('PostgreSQL migrations', () => {
  const schemas: string[] = [];
  const stores: AsyncStore[] = [];
  const fresh = () => {
    const s = testSchemaName();
    schemas.push(s);
    return s;
  };
  const open = async (schema: string, opts: Parameters<typeof createPgStore>[1] = {}) => {
    const s = await createPgStore(PG_TEST_URL, { schema, checkIntervalMs: 0, poolMax: 2, ...opts });
    stores.push(s);
    return s;
  };
  const query = async (schema: string, sql: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: PG_TEST_URL, options: `-c search_path="${schema}"` });
    await client.connect();
    try {
      return (await client.query(sql, values)).rows as Record<string, unknown>[];
    } finally {
      await client.end();
    }
  };
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const s of schemas.splice(0)) await dropSchema(s);
  });

  it('applies each migration once when several replicas open the database together', async () => {
    const schema = fresh();
    const replicas = await Promise.all([open(schema), open(schema), open(schema), open(schema)]);
    const rows = await query(schema, 'SELECT version, name FROM schema_migrations ORDER BY version');
    expect(rows).toEqual(loadPgMigrations().map((m) => ({ version: m.version, name: m.name })));
    for (const r of replicas) expect(await r.schemaVersion()).toBe(loadPgMigrations().at(-1)?.version);
    // They share the data, of course.
    expect(await replicas[0]?.events.recordDelivery('slack', 'e', 1)).toBe(true);
    expect(await replicas[3]?.events.recordDelivery('slack', 'e', 1)).toBe(false);
  });

  it('refuses a database newer than this release', async () => {
    const schema = fresh();
    await (await open(schema)).close();
    await query(schema, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, '0999_future', 0)");
    const err = await createPgStore(PG_TEST_URL, { schema, checkIntervalMs: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MigrationError);
    expect(String(err)).toMatch(/schema version 999, newer than this release knows/);
  });

  it('without migrating, asks for `assistant-bridge migrate` on a database behind', async () => {
    const schema = fresh();
    await query('public', `CREATE SCHEMA "${schema}"`);
    const err = await createPgStore(PG_TEST_URL, { schema, migrate: false, checkIntervalMs: 0 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MigrationError);
    expect(String(err)).toMatch(/schema version 0, this release needs \d+: run assistant-bridge migrate/);
    // Migrated, the same open succeeds.
    await (await open(schema)).close();
    expect(await (await open(schema, { migrate: false })).schemaVersion()).toBeGreaterThan(0);
  });

  it('a server that does not answer is a connection error, classified as unreachable', async () => {
    const url = 'postgres://bridge:secret@127.0.0.1:1/none';
    const err = await createPgStore(url, { connectTimeoutMs: 2000 }).catch((e: unknown) => e);
    expect(classifyPgError(err)).toMatchObject({ ok: false, kind: 'io' });
    expect(describePgUrl(url)).toBe('postgres://bridge@127.0.0.1:1/none');
  });

  it('a database that takes no connections for now (maintenance) is unreachable, not an error about the data', () => {
    const err = Object.assign(new Error('database "x" is not currently accepting connections'), { code: '55000' });
    expect(classifyPgError(err)).toMatchObject({ ok: false, kind: 'io' });
    const other = Object.assign(new Error('cannot drop the currently open database'), { code: '55000' });
    expect(classifyPgError(other)).toBeUndefined();
  });
});

replicaContract('PostgreSQL', pgDatabase, { skip: skip !== undefined });
