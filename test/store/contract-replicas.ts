import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RateLimitScheduler, shareOf } from '../../src/core/budget/scheduler.js';
import { ManualClock } from '../fakes/manual-clock.js';
import {
  type BucketRef,
  type Clock,
  type InFlightRecord,
  type Place,
  placeKey,
  systemClock,
} from '../../src/core/ports.js';
import { silentLogger } from '../../src/logger.js';
import { createCoordinator } from '../../src/replicas/coordinator.js';
import { createSharedQueue } from '../../src/replicas/shared-queue.js';
import type { AsyncStore } from '../../src/store/ports.js';
import type { TestDatabase } from './contract.js';
import { faultyStore, StoreFaults } from './faulty-store.js';

// What several replicas do through the store, on each backend: a place's queue keeps arrival
// order across replicas, and a live replica takes over the open replies of one that stopped.

const place: Place = { platform: 'slack', workspaceId: 'T1', channelId: 'C1', threadId: '171.5' };
const key = placeKey(place);
const lease = 15_000;

/** A clock standing still at `at` (timers never fire): the tests call beat() themselves. */
const stillClock = (at: () => number): Clock => ({ now: at, setTimeout: () => ({ clear: () => {} }) });

export function replicaContract(
  name: string,
  makeDatabase: () => Promise<TestDatabase>,
  opts: { skip?: boolean } = {},
) {
  describe.skipIf(opts.skip === true)(`replicas through the store: ${name}`, () => {
    let database: TestDatabase;
    let a: AsyncStore;
    let b: AsyncStore;
    beforeEach(async () => {
      database = await makeDatabase();
      a = await database.open();
      b = await database.open();
    });
    afterEach(async () => {
      await database.dispose();
    });

    it('a message waits while an older one of a live replica is in the place’s line', async () => {
      await a.replicas.heartbeat('r1', 0);
      await b.replicas.heartbeat('r2', 0);
      await a.leases.join(key, { id: 'm1', at: 100 }, 'r1');
      await b.leases.join(key, { id: 'm2', at: 101 }, 'r2');
      expect(await b.leases.tryAcquire(key, 'r2', 10, lease, { id: 'm2', at: 101 })).toBe(false);
      expect(await a.leases.tryAcquire(key, 'r1', 10, lease, { id: 'm1', at: 100 })).toBe(true);
      expect(await b.leases.tryAcquire(key, 'r2', 20, lease, { id: 'm2', at: 101 })).toBe(false); // held
      await a.leases.release(key, 'r1');
      expect(await b.leases.tryAcquire(key, 'r2', 30, lease, { id: 'm2', at: 101 })).toBe(true);
    });

    it('the waiting message of a replica that is gone does not block the line', async () => {
      await a.replicas.heartbeat('dead', 0);
      await a.leases.join(key, { id: 'm1', at: 100 }, 'dead');
      await b.replicas.heartbeat('r2', 20_000);
      await b.leases.join(key, { id: 'm2', at: 101 }, 'r2');
      expect(await b.leases.tryAcquire(key, 'r2', 20_000, lease, { id: 'm2', at: 101 })).toBe(true);
    });

    it('a lease names the reply its holder writes and who asked, for a Stop at another replica', async () => {
      await a.replicas.heartbeat('r1', 0);
      expect(await a.leases.tryAcquire(key, 'r1', 0, lease)).toBe(true);
      await a.leases.describe(key, 'r1', 'reply-1', 'U1');
      await b.leases.describe(key, 'r2', 'reply-x', 'U9'); // not r2's lease: nothing changes
      const seen = { placeKey: key, holder: 'r1', replyKey: 'reply-1', askerId: 'U1' };
      expect(await b.leases.findReply({ replyKey: 'reply-1' })).toEqual(seen);
      expect(await b.leases.findReply({ placeKey: key })).toEqual(seen);
      expect(await b.leases.findReply({ replyKey: 'reply-x' })).toBeUndefined();
      await a.leases.release(key, 'r1');
      expect(await b.leases.findReply({ replyKey: 'reply-1' })).toBeUndefined();
    });

    it('signals reach every replica listening (PostgreSQL; SQLite has none: one process)', async () => {
      if (a.signals === undefined || b.signals === undefined) {
        expect(a.backend).toBe('sqlite');
        return;
      }
      const got: string[] = [];
      const arrived = new Promise<void>((resolve) =>
        b.signals?.subscribe('bridge_test_signal', (p) => {
          got.push(p);
          resolve();
        }),
      );
      // The listening connection opens in the background: publish until it hears (bounded).
      for (let i = 0; i < 50 && got.length === 0; i++) {
        await a.signals.publish('bridge_test_signal', 'hello');
        await Promise.race([arrived, new Promise((r) => setTimeout(r, 100))]);
      }
      expect(got[0]).toBe('hello');
    });

    it('place locks: the older message is answered first, whichever replica asked first; its writes are handed over', async () => {
      const now = Date.now();
      await a.replicas.heartbeat('r1', now);
      await b.replicas.heartbeat('r2', now);
      const locks = (s: AsyncStore, id: string) =>
        createSharedQueue({
          leases: s.leases,
          replicaId: id,
          leaseMs: lease,
          clock: systemClock,
          logger: silentLogger,
          pollMs: 5,
        });
      const first = locks(a, 'r1').join(key, { id: 'm1', at: now });
      const second = locks(b, 'r2').join(key, { id: 'm2', at: now + 1 });
      // Both in line (each join is its own round trip; the connectors ack an event only after
      // its join, see connectors/slack/app.ts), then the younger asks first.
      await Promise.all([first.joined, second.joined]);
      const order: string[] = [];
      const signal = new AbortController().signal;
      const post: BucketRef = { key: 'slack:T1:D1:post', limit: 1, windowMs: 1000, perPlace: true };
      let handedToSecond: unknown;
      const later = second.acquire(signal).then(async (lease) => {
        order.push('m2');
        handedToSecond = lease.handedOver;
        await lease.release([]);
      });
      const hold = await first.acquire(signal);
      expect(hold.handedOver).toBeUndefined(); // nobody answered here before
      order.push('m1');
      expect(await a.leases.holder(key)).toBe('r1');
      await hold.release([{ bucket: post, at: now + 5 }]);
      await later;
      expect(order).toEqual(['m1', 'm2']);
      // r1's last post in the place reached r2 with the place.
      expect(handedToSecond).toEqual([{ bucket: post, at: now + 5 }]);
      expect(await a.leases.holder(key)).toBeUndefined();
    });

    it('a place whose give-back failed in an outage is given back once the database is back', async () => {
      const now = Date.now();
      await a.replicas.heartbeat('r1', now);
      await b.replicas.heartbeat('r2', now);
      const faults = new StoreFaults(5);
      const locks = (s: AsyncStore, id: string) =>
        createSharedQueue({
          leases: s.leases,
          replicaId: id,
          leaseMs: lease,
          clock: systemClock,
          logger: silentLogger,
          pollMs: 5,
        });
      const signal = new AbortController().signal;
      const first = locks(faultyStore(a, faults), 'r1').join(key, { id: 'm1', at: now });
      await first.joined;
      const hold = await first.acquire(signal);
      faults.down();
      await expect(hold.release([])).rejects.toThrow(/injected outage/);
      faults.up();
      // r1 is live (its heartbeat is fresh): its lease would not run out; the retry gives it back.
      const second = locks(b, 'r2').join(key, { id: 'm2', at: now + 1 });
      await second.joined;
      const next = await second.acquire(signal);
      expect(await b.leases.holder(key)).toBe('r2');
      await next.release([]);
    });

    it('a live replica (PostgreSQL; on SQLite the one process at start) claims and repairs the open replies of one whose heartbeat stopped, once', async () => {
      let now = 0;
      await a.replicas.heartbeat('dead', now);
      const id = await a.inflight.begin({
        platform: 'slack',
        eventId: 'e1',
        target: { place },
        at: now,
        owner: 'dead',
      });
      const repaired: InFlightRecord[][] = [];
      const coordinator = (s: AsyncStore, replicaId: string) =>
        createCoordinator({
          store: s,
          replicaId,
          leaseMs: lease,
          clock: stillClock(() => now),
          logger: silentLogger,
          repair: async (records) => {
            repaired.push(records);
            for (const r of records) await s.inflight.finish(r.id, 'interrupted', now);
          },
        });
      const r2 = coordinator(b, 'r2');
      const r3 = coordinator(a, 'r3');
      now = 1_000;
      if (a.backend === 'sqlite') {
        // One process: whatever is open at start is its last run's, whoever wrote it.
        expect((await r2.start()).map((r) => r.eventId)).toEqual(['e1']);
        await r2.stop();
        return;
      }
      expect(await r2.start()).toEqual([]);
      await r3.start();
      // r2 is answering: its reply is open and must be left alone.
      await b.inflight.begin({ platform: 'slack', eventId: 'e2', target: { place }, at: now, owner: 'r2' });
      await Promise.all([r2.beat(), r3.beat()]);
      expect(repaired.flat()).toEqual([]); // 'dead' is still within its lease
      now = lease + 1;
      await Promise.all([r2.beat(), r3.beat()]);
      expect(repaired.flat().map((r) => r.id)).toEqual([id]); // one replica repaired it
      expect(await a.replicas.gone(now, lease)).toEqual([]); // then the gone replica is forgotten
      expect((await a.inflight.listOpen()).map((r) => r.eventId)).toEqual(['e2']); // r2's own is left alone
      expect(r2.liveCount()).toBe(2);
      await r3.stop();
      await r2.beat();
      expect(r2.liveCount()).toBe(1);
      await r2.stop();
    });

    it('after an outage, a replica takes no one for gone until the others could beat again', async () => {
      if (a.backend === 'sqlite') return; // one process: no other replica
      let now = 1_000;
      const faults = new StoreFaults(3);
      const repaired: InFlightRecord[] = [];
      const coordinator = (s: AsyncStore, replicaId: string) =>
        createCoordinator({
          store: s,
          replicaId,
          leaseMs: lease,
          clock: stillClock(() => now),
          logger: silentLogger,
          repair: async (records) => {
            repaired.push(...records);
          },
        });
      const r2 = coordinator(faultyStore(b, faults), 'r2');
      const r3 = coordinator(a, 'r3');
      await r2.start();
      await r3.start();
      // r3 answers a held message just as the database comes back.
      await a.inflight.begin({ platform: 'slack', eventId: 'e3', target: { place }, at: now, owner: 'r3' });
      faults.down();
      now = 6_000;
      await r2.beat(); // fails: the database is down
      faults.up();
      // Back after longer than the lease: r3's last heartbeat is older than it, r3 is not gone.
      now = 1_000 + 2 * lease;
      await r2.beat();
      expect(repaired).toEqual([]);
      await r3.beat();
      now += lease / 3;
      await r2.beat();
      expect(repaired).toEqual([]);
      // A replica that really stopped is still taken for gone, one lease later.
      now += lease + 1;
      await r2.beat();
      expect(repaired.map((r) => r.eventId)).toEqual(['e3']);
      await r2.stop();
      await r3.stop();
    });

    it('a replica takes over only the replies of platforms it runs', async () => {
      if (a.backend === 'sqlite') return; // one process: there is no other replica to leave them to
      await a.replicas.heartbeat('dead', 0);
      await a.inflight.begin({ platform: 'discord', eventId: 'd1', target: { place }, at: 0, owner: 'dead' });
      const repaired: InFlightRecord[] = [];
      const slackOnly = createCoordinator({
        store: b,
        replicaId: 'slack-only',
        leaseMs: lease,
        clock: stillClock(() => lease + 1),
        logger: silentLogger,
        platforms: ['slack'],
        repair: async (records) => {
          repaired.push(...records);
        },
      });
      await slackOnly.start();
      await slackOnly.beat();
      expect(repaired).toEqual([]);
      // Left for a replica that runs Discord, owned by the gone one still (which is not forgotten).
      expect((await a.inflight.listOpen()).map((r) => [r.eventId, (r as { owner?: string }).owner])).toEqual([
        ['d1', 'dead'],
      ]);
      expect(await a.replicas.gone(lease + 1, lease)).toEqual(['dead']);
      await slackOnly.stop();
    });

    describe('learned budgets shared by replicas', () => {
      it('keeps the newer row when saves land out of order', async () => {
        const now = Date.now();
        await a.budgets.save({ key: 'slack:T1:update', perMinute: 20, burst: 2, limitedAt: now, updatedAt: now });
        await a.budgets.save({ key: 'slack:T1:update', perMinute: 44, burst: 4, updatedAt: now - 5000 });
        expect(await a.budgets.load()).toEqual([
          { key: 'slack:T1:update', perMinute: 20, burst: 2, limitedAt: now, updatedAt: now },
        ]);
      });

      it('a 429 one replica learns reaches another replica’s scheduler at its next sync', async () => {
        const clock = new ManualClock(Date.now());
        const bucket: BucketRef = { key: 'slack:T1:update', limit: 50, windowMs: 60_000 };
        const sa = new RateLimitScheduler({ clock, store: a.budgets });
        const sb = new RateLimitScheduler({ clock, store: b.budgets });
        await Promise.all([sa.restore(), sb.restore()]);
        for (const x of [sa, sb]) x.setShare(shareOf(2));
        (await sb.acquire([bucket], 'edit')).done({ ok: true });
        (await sa.acquire([bucket], 'edit')).done({ ok: true });
        (await sa.acquire([bucket], 'edit')).done({ ok: false, rateLimited: { retryAfterMs: 1000 } });
        await sa.flush(); // the 429 was saved at once; wait for the database to have it
        const learned = sa.budget(bucket.key);
        expect(learned?.learned).toBe(true);
        await sb.sync();
        const seen = sb.budget(bucket.key);
        expect(seen?.learned).toBe(true);
        expect(seen?.perMinute).toBeCloseTo(learned?.perMinute as number);
        expect(seen?.burst).toBe(learned?.burst);
        expect(seen?.mine.perMinute).toBeCloseTo((learned?.perMinute as number) / 2);
        sa.close();
        sb.close();
        await Promise.all([sa.flush(), sb.flush()]);
      });
    });
  });
}
