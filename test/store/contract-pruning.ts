import { describe, expect, it } from 'vitest';
import type { ConversationRecord, Place } from '../../src/core/ports.js';
import { BUDGET_KEEP_MS, HANDOVER_KEEP_MS } from '../../src/store/ports.js';
import type { ContractContext } from './contract.js';

// Storage that plateaus (issue 31, docs/storage.md): what grows with use is pruned, on every backend.

const place = (thread: string): Place => ({ platform: 'slack', workspaceId: 'T1', channelId: 'C1', threadId: thread });
const conv = (thread: string, lastUsedAt: number): ConversationRecord => ({
  place: place(thread),
  botId: 'bot1',
  flavor: 'b',
  upstreamId: `up-${thread}`,
  createdAt: 1,
  lastUsedAt,
});

export function pruningContract(ctx: () => ContractContext) {
  describe('pruning', () => {
    it('conversation mappings unused before the cut are deleted; a touched one stays', async () => {
      const { s, database } = ctx();
      const t = await database.open();
      await s.conversations.put(conv('1.1', 100));
      await s.conversations.put(conv('2.2', 200));
      await s.conversations.put(conv('3.3', 300));
      await t.conversations.touch(place('1.1'), 400);
      expect(await t.conversations.prune(300)).toBe(1);
      expect(await s.conversations.get(place('2.2'))).toBeUndefined();
      expect((await s.conversations.get(place('1.1')))?.upstreamId).toBe('up-1.1');
      expect((await s.conversations.get(place('3.3')))?.upstreamId).toBe('up-3.3');
      expect(await s.conversations.prune(300)).toBe(0);
    });

    it('votes cast before the cut are deleted, delivered or not', async () => {
      const { s } = ctx();
      const v = { placeKey: 'p', upstreamId: 'c1', messageId: 'm', vote: 'up' as const };
      await s.feedback.vote({ ...v, replyKey: 'r1', userId: 'U1', at: 100 });
      await s.feedback.vote({ ...v, replyKey: 'r2', userId: 'U1', at: 150 });
      await s.feedback.delivered([{ replyKey: 'r2', userId: 'U1' }], 160);
      await s.feedback.vote({ ...v, replyKey: 'r3', userId: 'U1', at: 300 });
      expect(await s.feedback.pruneVotes?.(200)).toBe(2);
      expect((await s.feedback.forConversation('c1')).map((x) => x.replyKey)).toEqual(['r3']);
    });

    it('housekeeping forgets old place handovers and old budget lessons', async () => {
      const { s } = ctx();
      await s.leases.tryAcquire('place-a', 'r1', Date.now(), 15_000);
      await s.leases.release('place-a', 'r1', '[{"bucket":"b","at":1}]');
      expect(await s.leases.handover('place-a')).toBeDefined();
      const now = Date.now();
      await s.budgets.save({ key: 'old', perMinute: 10, burst: 2, updatedAt: now - BUDGET_KEEP_MS - 10 });
      await s.budgets.save({ key: 'new', perMinute: 10, burst: 2, updatedAt: now });
      // Not yet: both stay.
      expect(await s.housekeeping(now)).toEqual({ handovers: 0, budgets: 1, playgroundOwners: 0 });
      expect(await s.leases.handover('place-a')).toBeDefined();
      const later = await s.housekeeping(now + HANDOVER_KEEP_MS + 60_000);
      expect(later.handovers).toBe(1);
      expect(await s.leases.handover('place-a')).toBeUndefined();
      expect((await s.budgets.load()).map((b) => b.key)).toEqual(['new']);
    });
  });
}
