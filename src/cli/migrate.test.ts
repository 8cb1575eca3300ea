import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../store/sqlite/index.js';
import { run } from './migrate.js';

// `assistant-bridge migrate` on the operator's first run: a database file that does not exist yet.

let dir: string;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bridge-migrate-'));
});
afterEach(async () => {
  rmSync(dir, { recursive: true, force: true });
});

async function migrateCli(env: Record<string, string>) {
  let stdout = '';
  let stderr = '';
  const code = await run([], {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env,
  });
  return { code, stdout, stderr };
}

describe('assistant-bridge migrate', () => {
  it('creates and migrates a fresh database, then finds it up to date', async () => {
    const path = join(dir, 'data', 'fresh.db');
    const first = await migrateCli({ DATABASE_PATH: path });
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toMatch(new RegExp(`^applied \\d+ migration\\(s\\) to ${path}: 0001_init`));

    const again = await migrateCli({ DATABASE_PATH: path });
    expect(again).toEqual({ code: 0, stdout: `database ${path} is up to date\n`, stderr: '' });

    // What `start` opens afterwards: every table there, nothing left to apply.
    const store = openStore(path, { migrate: false, checkIntervalMs: 0 });
    try {
      expect(store.health()).toEqual({ ok: true });
      expect(await store.installations.count()).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('says in one line when the path cannot hold a database', async () => {
    writeFileSync(join(dir, 'file'), 'not a folder');
    const res = await migrateCli({ DATABASE_PATH: join(dir, 'file', 'bridge.db') });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^cannot migrate .*bridge\.db: (ENOTDIR|EEXIST): /);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('exits 2 naming a malformed variable', async () => {
    const res = await migrateCli({ DATABASE_PATH: join(dir, 'x.db'), PORT: 'eighty' });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/PORT/);
  });
});

describe('assistant-bridge migrate with DATABASE_URL', async () => {
  const { dropSchema, PG_TEST_URL, pgSkipReason, testSchemaName } = await import('../../test/support/pg.js');
  const skip = await pgSkipReason();
  const schema = testSchemaName();
  afterEach(async () => {
    if (!skip) await dropSchema(schema);
  });

  it.skipIf(skip !== undefined)(
    'migrates PostgreSQL once, then finds it up to date; never prints the password',
    async () => {
      const pg = (await import('pg')).default;
      const admin = new pg.Client({ connectionString: PG_TEST_URL });
      await admin.connect();
      await admin.query(`CREATE SCHEMA "${schema}"`).finally(() => admin.end());
      const u = new URL(PG_TEST_URL);
      u.password = 'not-needed-with-trust';
      u.searchParams.set('options', `-c search_path=${schema}`);
      const env = { DATABASE_PATH: join(dir, 'unused.db'), DATABASE_URL: u.toString() };

      const first = await migrateCli(env);
      expect(first).toMatchObject({ code: 0, stderr: '' });
      expect(first.stdout).toMatch(/^applied \d+ migration\(s\) to postgres(ql)?:\/\/[^:]*@[^ ]+: 0001_init/);
      const again = await migrateCli(env);
      expect(again).toMatchObject({ code: 0, stderr: '' });
      expect(again.stdout).toMatch(/ is up to date\n$/);
      expect(first.stdout + again.stdout).not.toContain('not-needed-with-trust');
    },
  );

  it('says in one line when PostgreSQL does not answer', async () => {
    const res = await migrateCli({
      DATABASE_PATH: join(dir, 'unused.db'),
      DATABASE_URL: 'postgres://bridge:s3cret@127.0.0.1:1/bridge',
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^cannot migrate postgres:\/\/bridge@127\.0\.0\.1:1\/bridge: unreachable: /);
    expect(res.stderr).not.toContain('s3cret');
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
  });
});
