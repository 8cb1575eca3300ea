import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type Place, placeKey } from '../../src/core/ports.js';
import type { AsyncStore } from '../../src/store/ports.js';
import { ASYNC_COMMIT } from '../../src/store/pg/query.js';
import { createPgStore } from '../../src/store/pg/index.js';
import { dropSchema, PG_TEST_URL, pgSkipReason, testSchemaName } from '../support/pg.js';
import { type PgWireTap, startPgWireTap } from '../support/pg-wire-tap.js';

// What the store costs a reply on PostgreSQL before the upstream is asked: one statement per
// call (tryAcquire takes the lease and leaves the queue in one), and the small writes of the path
// commit without waiting for a WAL flush (src/store/pg/query.ts), while the session keeps
// the operator's synchronous_commit and the mapping itself stays a durable write. The statements
// are read off the wire by a tap between the store and the server.

const skip = await pgSkipReason();
if (skip) console.log(`PostgreSQL reply-path tests skipped: ${skip}`);

const WRITE = /^\s*(WITH\b[\s\S]*\b)?(INSERT|UPDATE|DELETE)\b/i;
const ASYNC = /set_config\('synchronous_commit', 'off', true\)/;

describe.skipIf(skip !== undefined)('PostgreSQL on the reply’s path', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });

  const open = async (): Promise<{ store: AsyncStore; tap: PgWireTap }> => {
    const schema = testSchemaName();
    const tap = await startPgWireTap(PG_TEST_URL);
    cleanups.push(async () => {
      await tap.close();
      await dropSchema(schema);
    });
    const store = await createPgStore(tap.url, { schema, checkIntervalMs: 0, poolMax: 1 });
    cleanups.push(() => store.close());
    return { store, tap };
  };

  it('one statement per call, and the path’s writes commit asynchronously', async () => {
    const { store, tap } = await open();
    const place: Place = { platform: 'slack', workspaceId: 'T1', channelId: 'D1' };
    const key = placeKey(place);
    await store.replicas.heartbeat('r1', 1_000);
    await store.conversations.put({ place, botId: 'b', flavor: 'a', upstreamId: 'c1', createdAt: 1, lastUsedAt: 1 });
    tap.statements.splice(0);

    // The order the relay and the reply turn call them in.
    expect(await store.events.recordDelivery('slack', 'D1:1.0', 1_000)).toBe(true);
    await store.leases.join(key, { id: 'D1:1.0', at: 1_000 }, 'r1');
    expect(await store.leases.tryAcquire(key, 'r1', 1_001, 15_000, { id: 'D1:1.0', at: 1_000 })).toBe(true);
    expect(await store.leases.handover(key)).toBeUndefined();
    expect((await store.conversations.get(place))?.upstreamId).toBe('c1');
    await store.conversations.touch(place, 1_002);
    expect(await store.feedback.pending('c1', 'U1')).toEqual([]);
    const id = await store.inflight.begin({
      platform: 'slack',
      eventId: 'D1:1.0',
      target: { place },
      upstreamId: 'c1',
      at: 1_002,
      owner: 'r1',
    });
    expect(tap.statements).toHaveLength(8);
    const writes = tap.statements.filter((s) => WRITE.test(s));
    expect(writes).toHaveLength(5);
    for (const w of writes) expect(w).toMatch(ASYNC);

    // The line was left when the lease was taken: another replica's later message is not held by it.
    await store.replicas.heartbeat('r2', 1_003);
    await store.leases.release(key, 'r1');
    expect(await store.leases.tryAcquire(key, 'r2', 1_004, 15_000, { id: 'D1:2.0', at: 1_003 })).toBe(true);
    // Progress is off the path but frequent: asynchronous too. The mapping is not.
    tap.statements.splice(0);
    await store.inflight.progress(id, ['m1'], 'text', 1_005);
    await store.conversations.put({ place, botId: 'b', flavor: 'a', upstreamId: 'c2', createdAt: 2, lastUsedAt: 2 });
    expect(tap.statements[0]).toMatch(ASYNC);
    expect(tap.statements[1]).not.toMatch(ASYNC);
    expect((await store.conversations.get(place))?.upstreamId).toBe('c2');
  });

  it('ASYNC_COMMIT holds for its own transaction only: the session keeps its setting', async () => {
    const schema = testSchemaName();
    cleanups.push(() => dropSchema(schema));
    const client = new pg.Client({ connectionString: PG_TEST_URL });
    await client.connect();
    cleanups.push(() => client.end());
    await client.query(`CREATE SCHEMA "${schema}"`);
    await client.query(`CREATE TABLE "${schema}".t (k text PRIMARY KEY, v bigint)`);
    const setting = async () =>
      (await client.query<{ s: string }>('SELECT current_setting($1) AS s', ['synchronous_commit'])).rows[0]?.s;
    const before = await setting();
    expect(before).not.toBe('off');
    const inserted = await client.query<{ s: string }>(
      `INSERT INTO "${schema}".t (k, v) SELECT $1, $2 FROM ${ASYNC_COMMIT} RETURNING current_setting('synchronous_commit') AS s`,
      ['a', 1],
    );
    expect(inserted.rows[0]?.s).toBe('off');
    expect(await setting()).toBe(before);
    const updated = await client.query<{ s: string }>(
      `UPDATE "${schema}".t SET v = $1 FROM ${ASYNC_COMMIT} WHERE k = $2 RETURNING current_setting('synchronous_commit') AS s`,
      [2, 'a'],
    );
    expect(updated.rows[0]?.s).toBe('off');
    expect(await setting()).toBe(before);
    expect((await client.query(`SELECT v FROM "${schema}".t`)).rows).toEqual([{ v: '2' }]);
  });
});
