import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchema, PG_TEST_URL, pgSkipReason, testSchemaName } from '../support/pg.js';
import { type BridgeChild, type ChildWorld, killHard, spawnBridge, startChildWorld } from './bridge-child.js';

// Two real bridge processes (`node dist/cli.js start`) on one PostgreSQL schema and one fake
// Discord bot: each takes half of the bot's budgets (bridge_budget_share 0.5) once the heartbeats
// see each other; when one leaves (SIGTERM), the other takes the whole again.

const skip = await pgSkipReason();
if (skip) console.log(`budget share (replicas) test skipped: ${skip}`);

const API_KEY = 'share-key';
const BOT = 'demo-bot';
/** Beats every second (a third of the lease), so the test waits seconds, not a quarter minute. */
const LEASE_SECONDS = '3';

let world: ChildWorld | undefined;
let schema: string | undefined;
const replicas: BridgeChild[] = [];

async function createSchema(name: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_TEST_URL });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA "${name}"`);
  } finally {
    await client.end();
  }
}

/** The value of `bridge_budget_share` in a replica's /metrics. */
async function share(b: BridgeChild): Promise<number | undefined> {
  const text = await (await fetch(`${b.base}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
  const m = /^bridge_budget_share (\S+)$/m.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Polls until every replica shows `want` (bounded); returns what they showed last. */
async function waitForShare(bs: BridgeChild[], want: number, timeoutMs: number): Promise<(number | undefined)[]> {
  const deadline = Date.now() + timeoutMs;
  let seen: (number | undefined)[] = [];
  while (Date.now() < deadline) {
    seen = await Promise.all(bs.map(share));
    if (seen.every((s) => s === want)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return seen;
}

beforeAll(async () => {
  if (skip) return;
  world = await startChildWorld('share', API_KEY, BOT);
  schema = testSchemaName();
  await createSchema(schema);
}, 120_000);

afterAll(async () => {
  for (const r of replicas) await killHard(r);
  await world?.close();
  if (schema) await dropSchema(schema);
});

describe.skipIf(skip !== undefined)('budget share across replicas (real processes, PostgreSQL)', () => {
  it('two replicas take half each; when one leaves, the other takes the whole again', async () => {
    const w = world as ChildWorld;
    const url = new URL(PG_TEST_URL);
    url.searchParams.set('options', `-c search_path=${schema as string}`);
    const env = (id: string) => ({
      CHAT_API_URL: w.emu.url,
      CHAT_API_KEY: API_KEY,
      CHAT_BOT_ID: BOT,
      DISCORD_BOT_TOKEN: w.fake.token,
      DISCORD_API_URL: w.fake.apiUrl,
      DATABASE_URL: url.toString(),
      REPLICA_ID: id,
      REPLICA_LEASE_SECONDS: LEASE_SECONDS,
    });
    const a = await spawnBridge(env('replica-a'));
    replicas.push(a);
    await a.waitReady(30_000);
    expect(await share(a)).toBe(1); // alone: the whole budget, from start-up

    const b = await spawnBridge(env('replica-b'));
    replicas.push(b);
    await b.waitReady(30_000);
    expect(await waitForShare([a, b], 0.5, 10_000), `${a.tail(10)}\n${b.tail(10)}`).toEqual([0.5, 0.5]);

    b.kill('SIGTERM'); // a rolling deploy: b drains, leaves the group, exits
    await b.exited;
    // Exited by itself with 0 (a SIGTERM during start once killed it by the signal): the log says why not.
    expect(b.exitSignal, b.tail()).toBeNull();
    expect(b.exitCode, b.tail()).toBe(0);
    expect(await waitForShare([a], 1, 10_000), a.tail(10)).toEqual([1]);
  }, 90_000);
});
