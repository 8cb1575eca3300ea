import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { noopMetrics } from '../../src/core/metrics-port.js';
import { type Clock, systemClock } from '../../src/core/ports.js';
import { createRelay } from '../../src/core/intake/relay.js';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { silentLogger } from '../../src/logger.js';
import { createSharedQueue } from '../../src/replicas/shared-queue.js';
import type { AsyncStore } from '../../src/store/ports.js';
import { openStore } from '../../src/store/sqlite/index.js';
import { createPgStore } from '../../src/store/pg/index.js';
import { createChatService } from '../../src/upstream/index.js';
import { testRelaySettings } from '../fakes/relay-settings.js';
import { TestConnector } from '../fakes/test-connector.js';
import { dropSchema, PG_TEST_URL, pgSkipReason, testSchemaName } from '../support/pg.js';

// Renewal to the end: a conversation the upstream rejects (Form A: 404 Conversation not found;
// Form B: 410 SESSION_EXPIRED) is renewed for the second message, and the third message goes on
// in the renewed conversation: one upstream call, the renewed id, no second renewal note. On
// both forms and both store backends (SQLite; PostgreSQL at TEST_DATABASE_URL), since each
// stores the renewed mapping its own way.

const skipPg = await pgSkipReason();
if (skipPg) console.log(`PostgreSQL renewal tests skipped: ${skipPg}`);

/** The note the second reply starts with (user-messages.ts `renewed`), written out here. */
const RENEWED = '_(Earlier context was not kept; this is a new conversation.)_\n\n';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

type Backend = 'sqlite' | 'postgres';

async function openBackend(backend: Backend): Promise<AsyncStore> {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'renewal-'));
    const store = openStore(join(dir, 'bridge.db'));
    cleanups.push(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return store;
  }
  const schema = testSchemaName();
  const store = await createPgStore(PG_TEST_URL, { schema, checkIntervalMs: 0 });
  cleanups.push(async () => {
    await store.close();
    await dropSchema(schema);
  });
  return store;
}

/** The relay wired as src/main.ts does for this backend (PostgreSQL: place locks), the test connector. */
async function world(
  backend: Backend,
  form: 'a' | 'b',
  clock: Clock = systemClock,
): Promise<{ emu: Emulator; conn: TestConnector; store: AsyncStore }> {
  const emu = await startEmulator({ chunkDelayMs: 1 });
  cleanups.push(() => emu.close());
  const store = await openBackend(backend);
  const chat = createChatService({
    url: emu.url,
    apiKey: 'dev-key',
    form,
    requestTimeoutMs: 5000,
    streamIdleTimeoutMs: 5000,
    logger: silentLogger,
  });
  cleanups.push(() => chat.close());
  const relay = createRelay({
    chat,
    botFor: () => 'demo-bot',
    conversations: store.conversations,
    events: store.events,
    inflight: store.inflight,
    replicaId: 'r1',
    ...(backend === 'postgres'
      ? {
          sharedQueue: createSharedQueue({
            leases: store.leases,
            replicaId: 'r1',
            leaseMs: 15_000,
            clock: systemClock,
            logger: silentLogger,
          }),
        }
      : {}),
    metrics: noopMetrics,
    logger: silentLogger,
    clock,
    settings: testRelaySettings({ sessionIdleSeconds: IDLE_SECONDS }),
  });
  // A roomy bucket: three replies of a post and a final edit each, without waiting out a window.
  const conn = new TestConnector({ bucketLimit: 20 });
  await conn.start(relay);
  cleanups.push(() => relay.drain(1000));
  return { emu, conn, store };
}

const PLACE = { platform: 'test', channelId: 'C1' } as const;
const IDLE_SECONDS = 3600;

/** The system clock, moved forward by `skip` (ms): the relay's idea of time, the timers real. */
function skippingClock(): Clock & { skip(ms: number): void } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    setTimeout: (fn, ms) => systemClock.setTimeout(fn, ms),
    skip(ms) {
      offset += ms;
    },
  };
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backend === 'postgres' && skipPg !== undefined)(`renewal on ${backend}`, () => {
    for (const form of ['a', 'b'] as const) {
      it(`Form ${form}: expired → the second message renews → the third goes on in the renewed conversation`, async () => {
        const { emu, conn, store } = await world(backend, form);
        const chats = (message: string) =>
          emu.requests.filter((r) => r.message === message && (r.endpoint === 'stream' || r.endpoint === 'send'));

        expect(await conn.send({ text: 'first' })).toEqual({ status: 'answered' });
        const first = (await store.conversations.get(PLACE))?.upstreamId;
        expect(first).toBeDefined();
        expect(emu.expire(first as string)).toBe(true);

        expect(await conn.send({ text: 'second' })).toEqual({ status: 'answered' });
        // Sent on the old conversation, refused, sent again on a new one.
        const second = chats('second');
        expect(second).toHaveLength(2);
        expect(second[0]?.conversationId).toBe(first);
        const renewedId = (await store.conversations.get(PLACE))?.upstreamId;
        expect(renewedId).toBeDefined();
        expect(renewedId).not.toBe(first);
        if (form === 'b') expect(second[1]?.conversationId).toBe(renewedId);

        expect(await conn.send({ text: 'third' })).toEqual({ status: 'answered' });
        // One call, in the renewed conversation; the mapping did not move again.
        const third = chats('third');
        expect(third).toHaveLength(1);
        expect(third[0]?.conversationId).toBe(renewedId);
        expect((await store.conversations.get(PLACE))?.upstreamId).toBe(renewedId);
        // The upstream holds the third message in the renewed conversation, after the second.
        const conv = emu.conversation(renewedId as string);
        expect(conv?.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['second', 'third']);

        // What the user sees: one renewal note, on the second reply only.
        expect(conn.contentsIn('C1')).toEqual(['You said: first', `${RENEWED}You said: second`, 'You said: third']);
      });

      // The other expiry: the place was idle past SESSION_IDLE_SECONDS, so the bridge itself starts
      // a new conversation (no refusal). On Form A the upstream names it in the reply, so only a
      // stored renewal (its new last-use time) keeps the third message from renewing again.
      it(`Form ${form}: idle too long → the second message renews → the third goes on in the renewed conversation`, async () => {
        const clock = skippingClock();
        const { emu, conn, store } = await world(backend, form, clock);
        const chats = (message: string) =>
          emu.requests.filter((r) => r.message === message && (r.endpoint === 'stream' || r.endpoint === 'send'));

        expect(await conn.send({ text: 'first' })).toEqual({ status: 'answered' });
        const first = (await store.conversations.get(PLACE))?.upstreamId;
        expect(first).toBeDefined();
        clock.skip((IDLE_SECONDS + 1) * 1000);

        expect(await conn.send({ text: 'second' })).toEqual({ status: 'answered' });
        const second = chats('second');
        expect(second).toHaveLength(1);
        expect(second[0]?.conversationId).not.toBe(first);
        const renewedId = (await store.conversations.get(PLACE))?.upstreamId;
        expect(renewedId).toBeDefined();
        expect(renewedId).not.toBe(first);
        expect(
          emu
            .conversation(renewedId as string)
            ?.messages.filter((m) => m.role === 'user')
            .map((m) => m.content),
        ).toEqual(['second']);

        // A minute later (well within the idle limit): the renewed conversation, no second renewal.
        clock.skip(60_000);
        expect(await conn.send({ text: 'third' })).toEqual({ status: 'answered' });
        const third = chats('third');
        expect(third).toHaveLength(1);
        expect(third[0]?.conversationId).toBe(renewedId);
        expect((await store.conversations.get(PLACE))?.upstreamId).toBe(renewedId);
        const conv = emu.conversation(renewedId as string);
        expect(conv?.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['second', 'third']);

        expect(conn.contentsIn('C1')).toEqual(['You said: first', `${RENEWED}You said: second`, 'You said: third']);
      });
    }
  });
}
