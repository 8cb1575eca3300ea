import { describe, expect, it } from 'vitest';
import { FakeChat } from '../../../test/fakes/fake-chat.js';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { TestConnector } from '../../../test/fakes/test-connector.js';
import { openMemoryStore } from '../../../test/fakes/memory-store.js';
import { testRelaySettings } from '../../../test/fakes/relay-settings.js';
import { faultyStore, StoreFaults } from '../../../test/store/faulty-store.js';
import { silentLogger } from '../../logger.js';
import { type BridgeMetrics, noopMetrics } from '../metrics-port.js';
import type { HandleResult } from '../ports.js';
import { MESSAGES } from '../user-messages.js';
import { createRelay, type RelaySettings } from './relay.js';

// Issue 37: a message whose store calls fail as in an outage is held (working indicator, its
// place's order kept) and answered exactly once when the store is back; the hold is bounded
// (busy notice), gives up after its time (storage notice) and at shutdown (restarting).

function setup(o: { settings?: Partial<RelaySettings>; health?: boolean; form?: 'a' | 'b' } = {}) {
  const clock = new ManualClock();
  const chat = new FakeChat(o.form ?? 'b');
  const faults = new StoreFaults(7);
  const store = faultyStore(openMemoryStore(), faults);
  const conn = new TestConnector({ clock, bucketLimit: 50 });
  const held: number[] = [];
  const refused: string[] = [];
  const metrics: BridgeMetrics = {
    ...noopMetrics,
    heldEvents: (n) => held.push(n),
    deliveryRefused: (_p, reason) => refused.push(reason),
  };
  const relay = createRelay({
    chat,
    botFor: () => 'demo-bot',
    conversations: store.conversations,
    events: store.events,
    inflight: store.inflight,
    ...(o.health === false
      ? {}
      : {
          storeHealth: {
            health: () => faults.injected() ?? { ok: true },
            onHealthChange: (l) => faults.onChange(l),
          },
        }),
    metrics,
    logger: silentLogger,
    clock,
    settings: testRelaySettings({ streamEditIntervalMs: 1000, ...o.settings }),
  });
  void conn.start(relay);
  const run = async <T>(p: Promise<T>, maxMs = 60_000): Promise<T> => {
    let done = false;
    void p.finally(() => (done = true)).catch(() => {});
    await clock.advanceUntil(() => done, maxMs, 100);
    return p;
  };
  return { clock, chat, faults, store, conn, relay, run, held, refused };
}

const statuses = (rs: HandleResult[]) => rs.map((r) => r.status);

describe('store outage: held messages', () => {
  it('messages arriving while the store is down are held, then answered once each, in their place order', async () => {
    const { conn, chat, faults, clock, run, held } = setup();
    faults.down();
    const sent = [
      conn.send({ text: 'one', channelId: 'C1' }),
      conn.send({ text: 'two', channelId: 'C1' }),
      conn.send({ text: 'other', channelId: 'C2' }),
      conn.send({ text: 'three', channelId: 'C1' }),
    ];
    // Down for a while: nothing answered, nothing asked upstream, each shows it is being worked on.
    await clock.advanceUntil(() => false, 30_000, 100);
    expect(chat.requests).toHaveLength(0);
    expect(conn.contentsIn('C1')).toEqual([]);
    expect(new Set(conn.workingShown)).toEqual(new Set(['test:channel:C1', 'test:channel:C2']));
    expect(Math.max(...held)).toBe(4);
    faults.up();
    expect(statuses(await run(Promise.all(sent)))).toEqual(['answered', 'answered', 'answered', 'answered']);
    expect(conn.contentsIn('C1')).toEqual(['You said: one', 'You said: two', 'You said: three']);
    expect(conn.contentsIn('C2')).toEqual(['You said: other']);
    expect(chat.requests.map((r) => r.message).sort()).toEqual(['one', 'other', 'three', 'two']);
    expect(held.at(-1)).toBe(0);
  });

  it('a follow-up held in an outage keeps its conversation', async () => {
    const { conn, chat, faults, run } = setup();
    expect(statuses([await run(conn.send({ text: 'first', channelId: 'C1' }))])).toEqual(['answered']);
    faults.down();
    const later = conn.send({ text: 'second', channelId: 'C1' });
    await run(new Promise((r) => setTimeout(r, 0)), 5000);
    faults.up();
    expect((await run(later)).status).toBe('answered');
    const [a, b] = chat.requests;
    expect(b?.conversationId).toBeDefined();
    expect(b?.conversationId).toBe(a?.conversationId);
  });

  it('the conversation id the upstream named mid-reply is kept through a cut connection', async () => {
    const { conn, chat, store, run } = setup({ form: 'a' });
    const put = store.conversations.put.bind(store.conversations);
    let cuts = 2;
    // The store refuses the first two writes of the captured id (a connection cut, a failover).
    store.conversations.put = async (rec) => {
      if (rec.upstreamId === 'conv-1' && cuts-- > 0) {
        throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'STORE_UNAVAILABLE' });
      }
      return put(rec);
    };
    expect((await run(conn.send({ text: 'one' }))).status).toBe('answered');
    expect((await run(conn.send({ text: 'two' }))).status).toBe('answered');
    expect(chat.requests.map((r) => r.conversationId)).toEqual([undefined, 'conv-1']);
  });

  it('the reply step failing (store down after the dedup record) is held as well', async () => {
    const { conn, chat, faults, store, run } = setup();
    const begin = store.inflight.begin.bind(store.inflight);
    let failing = true;
    // A fault in the reply step only: the dedup record is written, the in-flight record is not.
    store.inflight.begin = async (rec) => {
      if (failing) {
        faults.down();
        throw faults.fault('inflight.begin');
      }
      return begin(rec);
    };
    const p = conn.send({ text: 'hi', channelId: 'C1' });
    await run(new Promise((r) => setTimeout(r, 0)), 5000);
    expect(chat.requests).toHaveLength(0);
    failing = false;
    faults.up();
    expect((await run(p)).status).toBe('answered');
    expect(conn.contentsIn('C1')).toEqual(['You said: hi']);
    expect(chat.requests).toHaveLength(1);
  });

  it('a second delivery of an event held at its reply step is a duplicate, not an error', async () => {
    const { conn, chat, faults, store, run } = setup();
    const begin = store.inflight.begin.bind(store.inflight);
    let failing = true;
    store.inflight.begin = async (rec) => {
      if (failing) {
        faults.down();
        throw faults.fault('inflight.begin');
      }
      return begin(rec);
    };
    const first = conn.send({ text: 'hi', channelId: 'C1', eventId: 'ev-twin' });
    await run(new Promise((r) => setTimeout(r, 0)), 5000);
    // Held at its reply step; the same event delivered again (a mention's second event) while down.
    const again = conn.send({ text: 'hi', channelId: 'C1', eventId: 'ev-twin' });
    await run(new Promise((r) => setTimeout(r, 0)), 5000);
    failing = false;
    faults.up();
    expect(statuses(await run(Promise.all([first, again])))).toEqual(['answered', 'duplicate']);
    expect(conn.contentsIn('C1')).toEqual(['You said: hi']);
    expect(chat.requests).toHaveLength(1);
  });

  it('a full hold: the next message gets the busy notice privately-or-once, counted as hold_full', async () => {
    const { conn, faults, run, refused } = setup({ settings: { maxHeldEvents: 1 } });
    faults.down();
    const first = conn.send({ text: 'kept', channelId: 'C1' });
    const second = conn.send({ text: 'refused', channelId: 'C2' });
    expect((await run(second)).status).toBe('queue_full');
    expect(conn.contentsIn('C2')).toEqual([MESSAGES.overloaded]);
    expect(refused).toEqual(['hold_full']);
    faults.up();
    expect((await run(first)).status).toBe('answered');
    expect(conn.contentsIn('C1')).toEqual(['You said: kept']);
  });

  it('without a health source the held call is tried again on its own backoff', async () => {
    const { conn, faults, clock, run } = setup({ health: false });
    faults.down();
    const p = conn.send({ text: 'hi', channelId: 'C1' });
    await clock.advanceUntil(() => false, 10_000, 100);
    const tries = faults.counts.failed;
    // Backoff: at most one try per 2 s once it has grown.
    await clock.advanceUntil(() => false, 10_000, 100);
    expect(faults.counts.failed - tries).toBeLessThanOrEqual(6);
    faults.up();
    expect((await run(p)).status).toBe('answered');
  });

  it('an outage longer than the hold: the storage notice, no upstream call', async () => {
    const { conn, chat, faults, run } = setup({ settings: { holdMaxSeconds: 30 } });
    faults.down();
    expect((await run(conn.send({ text: 'hi', channelId: 'C1' }), 120_000)).status).toBe('failed');
    expect(conn.contentsIn('C1')).toEqual([MESSAGES.storageDown]);
    expect(chat.requests).toHaveLength(0);
  });

  it('shutdown while held: the restarting notice', async () => {
    const { conn, relay, faults, clock, run } = setup();
    faults.down();
    const p = conn.send({ text: 'hi', channelId: 'C1' });
    await clock.advanceUntil(() => false, 1000, 100);
    const drained = relay.drain(1000);
    expect((await run(p)).status).toBe('interrupted');
    await run(drained);
    expect(conn.contentsIn('C1')).toEqual([MESSAGES.restarting]);
  });
});
