import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationRecord, Place, ReplyTarget } from '../../src/core/ports.js';
import { expectedOf, placeKey } from '../../src/core/ports.js';
import type { AsyncStore } from '../../src/store/ports.js';
import { oauthStateContract } from './contract-oauth-states.js';
import { pruningContract } from './contract-pruning.js';
import { playgroundOwnersContract } from './contract-playground-owners.js';
import { playgroundTurnsContract } from './contract-playground-turns.js';
import { transcriptContract } from './contract-transcripts.js';

// One contract for every backend of the async store port (src/store/ports.ts): SQLite and
// PostgreSQL must answer the same. "Another replica" is a second store opened on the same
// database (a second connection or pool), so the races below are races between replicas.

/** One empty database for one test; `open` may be called several times (several replicas). */
export interface TestDatabase {
  open(): Promise<AsyncStore>;
  /** Closes what `open` opened and removes the database. */
  dispose(): Promise<void>;
}

/** What the cases in other files of the contract (feedback, OAuth states) work on: this test's. */
export interface ContractContext {
  /** The store the test opened first. */
  s: AsyncStore;
  database: TestDatabase;
}

export interface ContractOptions {
  /** Set: the suite is skipped (the reason was printed once by the caller). */
  skip?: boolean;
}

const slackThread: Place = { platform: 'slack', workspaceId: 'T1', channelId: 'C1', threadId: '171.5' };
const discordChannel: Place = { platform: 'discord', channelId: '42' };

const conv = (place: Place, upstreamId: string | undefined, at = 1000, botId = 'bot1'): ConversationRecord => ({
  place,
  botId,
  flavor: 'b',
  upstreamId,
  createdAt: at,
  lastUsedAt: at,
});

const target = (place: Place, data?: ReplyTarget['data']): ReplyTarget => (data ? { place, data } : { place });

export function storeContract(name: string, makeDatabase: () => Promise<TestDatabase>, opts: ContractOptions = {}) {
  describe.skipIf(opts.skip === true)(`async store contract: ${name}`, () => {
    let database: TestDatabase;
    let s: AsyncStore;
    beforeEach(async () => {
      database = await makeDatabase();
      s = await database.open();
    });
    afterEach(async () => {
      await database.dispose();
    });

    // The OAuth state cases live in their own file; they were not run by any backend before.
    oauthStateContract(() => ({ s, database }));
    pruningContract(() => ({ s, database }));
    playgroundOwnersContract(() => ({ s, database }));
    playgroundTurnsContract(() => ({ s, database }));
    transcriptContract(() => ({ s, database }));

    describe('conversations', () => {
      it('keeps, touches, replaces and deletes the mapping of a place', async () => {
        expect(await s.conversations.get(slackThread)).toBeUndefined();
        await s.conversations.put(conv(slackThread, 'sess-1'));
        await s.conversations.put(conv(discordChannel, undefined, 7, 'bot2'));
        await s.conversations.touch(slackThread, 5000);
        expect(await s.conversations.get(slackThread)).toEqual({ ...conv(slackThread, 'sess-1'), lastUsedAt: 5000 });
        // Optional parts of a place come back absent, not null; an unnamed conversation as undefined.
        expect(await s.conversations.get(discordChannel)).toEqual(conv(discordChannel, undefined, 7, 'bot2'));

        await s.conversations.put(conv(slackThread, 'sess-2', 9000));
        expect((await s.conversations.get(slackThread))?.upstreamId).toBe('sess-2');
        await s.conversations.delete(slackThread);
        expect(await s.conversations.get(slackThread)).toBeUndefined();
        expect(await s.conversations.get(discordChannel)).toBeDefined();
      });

      it('tells places apart by every part of the place', async () => {
        const other: Place[] = [
          { ...slackThread, threadId: '171.6' },
          { platform: 'slack', workspaceId: 'T1', channelId: 'C1' },
          { platform: 'slack', channelId: 'C1', threadId: '171.5' },
          { platform: 'discord', workspaceId: 'T1', channelId: 'C1', threadId: '171.5' },
        ];
        await s.conversations.put(conv(slackThread, 'mine'));
        for (const p of other) expect(await s.conversations.get(p), placeKey(p)).toBeUndefined();
      });

      it('replaceIfUnchanged writes only over what the caller read', async () => {
        // Nothing there: expected undefined inserts; a second insert-if-absent finds the first.
        expect(await s.conversations.replaceIfUnchanged(slackThread, undefined, conv(slackThread, undefined))).toBe(
          true,
        );
        expect(await s.conversations.replaceIfUnchanged(slackThread, undefined, conv(slackThread, 'x'))).toBe(false);
        // A mapping not yet named upstream: expected null.
        const pending = await s.conversations.get(slackThread);
        expect(expectedOf(pending)).toBeNull();
        expect(await s.conversations.replaceIfUnchanged(slackThread, 'sess-0', conv(slackThread, 'x'))).toBe(false);
        expect(await s.conversations.replaceIfUnchanged(slackThread, null, conv(slackThread, 'sess-1', 2000))).toBe(
          true,
        );
        // A named one: only its id matches.
        expect(await s.conversations.replaceIfUnchanged(slackThread, null, conv(slackThread, 'x'))).toBe(false);
        expect(await s.conversations.replaceIfUnchanged(slackThread, 'sess-9', conv(slackThread, 'x'))).toBe(false);
        expect(
          await s.conversations.replaceIfUnchanged(slackThread, 'sess-1', conv(slackThread, 'sess-2', 3000, 'bot9')),
        ).toBe(true);
        expect(await s.conversations.get(slackThread)).toEqual(conv(slackThread, 'sess-2', 3000, 'bot9'));
        // Gone again (a reset): expected undefined inserts anew.
        await s.conversations.delete(slackThread);
        expect(await s.conversations.replaceIfUnchanged(slackThread, 'sess-2', conv(slackThread, 'y'))).toBe(false);
        expect(await s.conversations.get(slackThread)).toBeUndefined();
      });

      it('refuses a record for another place', async () => {
        await expect(
          s.conversations.replaceIfUnchanged(slackThread, undefined, conv(discordChannel, 'x')),
        ).rejects.toThrow(/replaceIfUnchanged/);
      });

      it('of two replicas renewing one expired place, exactly one wins', async () => {
        const t = await database.open();
        await s.conversations.put(conv(slackThread, 'expired', 1));
        for (let round = 0; round < 5; round++) {
          const read = await s.conversations.get(slackThread);
          const before = expectedOf(read);
          const results = await Promise.all([
            s.conversations.replaceIfUnchanged(slackThread, before, conv(slackThread, `a${round}`, 10 + round)),
            t.conversations.replaceIfUnchanged(slackThread, before, conv(slackThread, `b${round}`, 10 + round)),
          ]);
          expect(results.filter(Boolean)).toHaveLength(1);
          const winner = results[0] ? `a${round}` : `b${round}`;
          expect((await t.conversations.get(slackThread))?.upstreamId).toBe(winner);
        }
        // And for a place nobody mapped yet.
        const fresh = await Promise.all(
          [s, t, s, t].map((x, i) =>
            x.conversations.replaceIfUnchanged(discordChannel, undefined, conv(discordChannel, `n${i}`)),
          ),
        );
        expect(fresh.filter(Boolean)).toHaveLength(1);
      });
    });

    describe('events', () => {
      it('marks an event seen once per platform, and prunes old ones', async () => {
        expect(await s.events.recordDelivery('slack', 'C1:1.0', 100)).toBe(true);
        expect(await s.events.recordDelivery('slack', 'C1:1.0', 200)).toBe(false);
        expect(await s.events.recordDelivery('discord', 'C1:1.0', 100)).toBe(true);
        expect(await s.events.recordDelivery('slack', 'C1:2.0', 500)).toBe(true);
        expect(await s.events.prune(300)).toBe(2);
        // Forgotten: a redelivery after the window is new again (by design: 24 h is far past any retry).
        expect(await s.events.recordDelivery('slack', 'C1:1.0', 600)).toBe(true);
        expect(await s.events.recordDelivery('slack', 'C1:2.0', 600)).toBe(false);
      });

      it('20 concurrent deliveries of one event across two replicas: exactly one is new', async () => {
        const t = await database.open();
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            (i % 2 === 0 ? s : t).events.recordDelivery('discord', 'm-123', 1000 + i),
          ),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
      });
    });

    describe('replies in flight', () => {
      it('follows a reply from begin to finish, with its owner', async () => {
        const tg = target(slackThread, { stream: true, n: 2 });
        const id = await s.inflight.begin({ platform: 'slack', eventId: 'e1', target: tg, at: 100, owner: 'r1' });
        const other = await s.inflight.begin({
          platform: 'discord',
          eventId: 'e2',
          target: target(discordChannel),
          upstreamId: 'up-2',
          at: 110,
          owner: 'r2',
        });
        expect(id).not.toBe(other);
        await s.inflight.progress(id, ['m1', 'm2'], 'half a reply', 150);
        await s.inflight.setUpstreamId(id, 'up-1');

        expect(await s.inflight.listOpen('slack')).toEqual([
          {
            id,
            platform: 'slack',
            eventId: 'e1',
            target: tg,
            messageIds: ['m1', 'm2'],
            lastText: 'half a reply',
            upstreamId: 'up-1',
            state: 'streaming',
            owner: 'r1',
            startedAt: 100,
            updatedAt: 150,
          },
        ]);
        expect((await s.inflight.listOpen()).map((r) => r.id)).toEqual([id, other]);
        expect((await s.inflight.listOpenOwnedBy(['r2', 'r9'])).map((r) => [r.id, r.upstreamId])).toEqual([
          [other, 'up-2'],
        ]);
        expect(await s.inflight.listOpenOwnedBy([])).toEqual([]);

        await s.inflight.finish(id, 'done', 200);
        await s.inflight.finish(other, 'interrupted', 400);
        expect(await s.inflight.listOpen()).toEqual([]);
        expect(await s.inflight.listOpenOwnedBy(['r1', 'r2'])).toEqual([]);
        expect(await s.inflight.prune(300)).toBe(1);
        expect(await s.inflight.prune(500)).toBe(1);
      });

      it('keeps a reply that is still streaming when pruning', async () => {
        await s.inflight.begin({ platform: 'test', eventId: 'e', target: target(discordChannel), at: 1, owner: 'r1' });
        expect(await s.inflight.prune(10_000)).toBe(0);
        expect(await s.inflight.listOpen('test')).toHaveLength(1);
      });

      it('of two replicas claiming a gone replica’s reply, exactly one gets it', async () => {
        const t = await database.open();
        const id = await s.inflight.begin({
          platform: 'slack',
          eventId: 'e',
          target: target(slackThread),
          at: 1,
          owner: 'dead',
        });
        const claims = await Promise.all([
          s.inflight.claim(id, 'dead', 'r1', 50),
          t.inflight.claim(id, 'dead', 'r2', 50),
        ]);
        expect(claims.filter(Boolean)).toHaveLength(1);
        const [rec] = await t.inflight.listOpen();
        expect(rec).toMatchObject({ id, owner: claims[0] ? 'r1' : 'r2', updatedAt: 50 });
        expect(await s.inflight.listOpenOwnedBy(['dead'])).toEqual([]);
        // A finished reply is not claimed.
        await s.inflight.finish(id, 'interrupted', 60);
        expect(await s.inflight.claim(id, rec?.owner ?? '', 'r3', 70)).toBe(false);
      });
    });

    describe('installations', () => {
      it('saves, finds (also through an org-wide install), replaces and deletes', async () => {
        expect(await s.installations.count()).toBe(0);
        await s.installations.save({ teamId: 'T1', enterpriseId: undefined }, 'U1', '{"team":"T1"}', 1);
        await s.installations.save({ teamId: undefined, enterpriseId: 'E1' }, undefined, '{"org":"E1"}', 2);
        expect(await s.installations.find({ teamId: 'T1', enterpriseId: undefined })).toBe('{"team":"T1"}');
        expect(await s.installations.find({ teamId: 'T7', enterpriseId: 'E1' })).toBe('{"org":"E1"}');
        expect(await s.installations.find({ teamId: 'T7', enterpriseId: undefined })).toBeUndefined();
        await s.installations.save({ teamId: 'T1', enterpriseId: undefined }, 'U2', '{"team":"T1","v":2}', 3);
        expect(await s.installations.count()).toBe(2);
        expect(await s.installations.find({ teamId: 'T1', enterpriseId: undefined })).toBe('{"team":"T1","v":2}');
        expect(await s.installations.delete({ teamId: 'T1', enterpriseId: undefined })).toBe(1);
        expect(await s.installations.delete({ teamId: 'T1', enterpriseId: undefined })).toBe(0);
        expect(await s.installations.count()).toBe(1);
      });
    });

    describe('replicas and place leases', () => {
      const lease = 15_000;

      it('tells live replicas from gone ones by their heartbeat', async () => {
        await s.replicas.heartbeat('r-b', 1000);
        await s.replicas.heartbeat('r-a', 1000);
        await s.replicas.heartbeat('r-c', 20_000);
        expect(await s.replicas.live(16_000, lease)).toEqual(['r-a', 'r-b', 'r-c']);
        expect(await s.replicas.gone(16_000, lease)).toEqual([]);
        expect(await s.replicas.live(16_001, lease)).toEqual(['r-c']);
        expect(await s.replicas.gone(16_001, lease)).toEqual(['r-a', 'r-b']);
        await s.replicas.heartbeat('r-a', 16_001);
        expect(await s.replicas.gone(16_001, lease)).toEqual(['r-b']);
      });

      it('holds a place for one replica until released', async () => {
        const key = placeKey(slackThread);
        await s.replicas.heartbeat('r1', 0);
        await s.replicas.heartbeat('r2', 0);
        expect(await s.leases.tryAcquire(key, 'r1', 0, lease)).toBe(true);
        expect(await s.leases.tryAcquire(key, 'r1', 10, lease)).toBe(true); // again: still mine
        expect(await s.leases.tryAcquire(key, 'r2', 10, lease)).toBe(false);
        expect(await s.leases.holder(key)).toBe('r1');
        // Another place is free.
        expect(await s.leases.tryAcquire(placeKey(discordChannel), 'r2', 10, lease)).toBe(true);
        await s.leases.release(key, 'r2'); // not r2's: nothing happens
        expect(await s.leases.holder(key)).toBe('r1');
        await s.leases.release(key, 'r1');
        expect(await s.leases.holder(key)).toBeUndefined();
        expect(await s.leases.tryAcquire(key, 'r2', 20, lease)).toBe(true);
      });

      it('a live holder keeps its place past the lease; a gone one loses it', async () => {
        const key = placeKey(slackThread);
        await s.replicas.heartbeat('r1', 0);
        expect(await s.leases.tryAcquire(key, 'r1', 0, lease)).toBe(true);
        // Lease not renewed for 20 s, but r1's heartbeat is fresh: still r1's.
        await s.replicas.heartbeat('r1', 19_000);
        expect(await s.leases.tryAcquire(key, 'r2', 20_000, lease)).toBe(false);
        // Heartbeat stale too (r1 died at 19 s): taken over.
        expect(await s.leases.tryAcquire(key, 'r2', 34_001, lease)).toBe(true);
        expect(await s.leases.holder(key)).toBe('r2');
        expect(await s.leases.renew(key, 'r1', 34_002)).toBe(false);
        expect(await s.leases.renew(key, 'r2', 34_002)).toBe(true);
      });

      it('a renewed lease holds even without a heartbeat row', async () => {
        const key = placeKey(discordChannel);
        expect(await s.leases.tryAcquire(key, 'r1', 0, lease)).toBe(true);
        expect(await s.leases.renew(key, 'r1', 10_000)).toBe(true);
        expect(await s.leases.tryAcquire(key, 'r2', 20_000, lease)).toBe(false);
        expect(await s.leases.tryAcquire(key, 'r2', 25_001, lease)).toBe(true);
      });

      it('of several replicas taking over one gone replica’s place, exactly one gets it', async () => {
        const t = await database.open();
        const key = placeKey(slackThread);
        await s.replicas.heartbeat('dead', 0);
        expect(await s.leases.tryAcquire(key, 'dead', 0, lease)).toBe(true);
        const now = 60_000;
        const got = await Promise.all(
          ['r1', 'r2', 'r3', 'r4'].map((id, i) => (i % 2 ? t : s).leases.tryAcquire(key, id, now, lease)),
        );
        expect(got.filter(Boolean)).toHaveLength(1);
        expect(await t.leases.holder(key)).toBe(['r1', 'r2', 'r3', 'r4'][got.indexOf(true)]);
      });
    });

    describe('learned budgets', () => {
      it('saves, replaces and loads rows', async () => {
        expect(await s.budgets.load()).toEqual([]);
        const now = Date.now();
        await s.budgets.save({ key: 'slack:T1:chat.update', perMinute: 45, burst: 3, updatedAt: now });
        await s.budgets.save({ key: 'discord:channel:1', perMinute: 75, burst: 5.5, updatedAt: now + 1 });
        await s.budgets.save({
          key: 'slack:T1:chat.update',
          perMinute: 30,
          burst: 2,
          limitedAt: now + 2,
          limitedPerMinute: 42,
          updatedAt: now + 2,
        });
        const t = await database.open();
        expect(await t.budgets.load()).toEqual([
          { key: 'discord:channel:1', perMinute: 75, burst: 5.5, updatedAt: now + 1 },
          {
            key: 'slack:T1:chat.update',
            perMinute: 30,
            burst: 2,
            limitedAt: now + 2,
            limitedPerMinute: 42,
            updatedAt: now + 2,
          },
        ]);
      });
    });

    describe('health and lifecycle', () => {
      it('is migrated, writable, and closed after close()', async () => {
        expect(await s.schemaVersion()).toBeGreaterThan(0);
        expect(s.isOpen()).toBe(true);
        expect(await s.check()).toEqual({ ok: true });
        expect(s.health()).toEqual({ ok: true });
        const seen: boolean[] = [];
        s.onHealthChange((h) => seen.push(h.ok));
        await s.close();
        expect(s.isOpen()).toBe(false);
        expect(s.health()).toMatchObject({ ok: false, kind: 'closed' });
        expect(seen).toEqual([false]);
        await expect(s.events.recordDelivery('slack', 'late', 1)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      });

      it('another replica sees what one wrote', async () => {
        const t = await database.open();
        await s.conversations.put(conv(slackThread, 'shared'));
        await s.events.recordDelivery('slack', 'ev', 1);
        expect((await t.conversations.get(slackThread))?.upstreamId).toBe('shared');
        expect(await t.events.recordDelivery('slack', 'ev', 2)).toBe(false);
      });
    });
  });
}
