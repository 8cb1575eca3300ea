import { randomBytes } from 'node:crypto';
import pg from 'pg';

// PostgreSQL for tests. TEST_DATABASE_URL names the server (CI sets it, and then an unreachable
// server fails the tests); unset, the local default is tried and, when it does not answer, the
// PostgreSQL suites are skipped with one printed line. Each test gets its own schema, dropped
// afterwards, so nothing depends on test order or on what another test file left.

export const PG_TEST_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REQUIRED = process.env.TEST_DATABASE_URL !== undefined;

/** undefined when PostgreSQL answers (or is required); otherwise why the suites are skipped. */
export async function pgSkipReason(): Promise<string | undefined> {
  if (REQUIRED) return undefined;
  const client = new pg.Client({ connectionString: PG_TEST_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (err) {
    return `${PG_TEST_URL} did not answer (${err instanceof Error ? err.message || (err as { code?: string }).code : String(err)}); set TEST_DATABASE_URL to run them`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export const testSchemaName = () => `bridge_test_${randomBytes(6).toString('hex')}`;

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_TEST_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * A database of its own, for tests whose bridges connect by URL (child processes): the URL, and
 * a function that drops it (after the bridges closed their connections).
 */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = testSchemaName();
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: PG_TEST_URL, connectionTimeoutMillis: 5000 });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(PG_TEST_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}
