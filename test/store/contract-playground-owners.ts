import { describe, expect, it } from 'vitest';
import type { ContractContext } from './contract.js';

// Playground ownership kept in the store (issue 39): the first browser to write in a conversation
// keeps it, for every replica and after a restart; a row goes a day after its conversation did.

const DAY = 24 * 3600_000;

export function playgroundOwnersContract(ctx: () => ContractContext) {
  describe('playground owners', () => {
    it('the first claim wins, for every replica and for a store opened again', async () => {
      const { s, database } = ctx();
      expect(await s.playgroundOwners.ownerOf('conv-1')).toBeUndefined();
      expect(await s.playgroundOwners.claim('conv-1', 'playground-alice', 100)).toBe('playground-alice');
      const other = await database.open();
      expect(await other.playgroundOwners.claim('conv-1', 'playground-mallory', 200)).toBe('playground-alice');
      expect(await other.playgroundOwners.ownerOf('conv-1')).toBe('playground-alice');
      expect(await s.playgroundOwners.claim('conv-1', 'playground-alice', 300)).toBe('playground-alice');
      expect(await s.playgroundOwners.ownerOf('conv-2')).toBeUndefined();
    });

    it('two replicas claiming one conversation at once get the same owner', async () => {
      const { s, database } = ctx();
      const other = await database.open();
      const ids = Array.from({ length: 20 }, (_, i) => `race-${i}`);
      const results = await Promise.all(
        ids.flatMap((id) => [s.playgroundOwners.claim(id, 'a', 1), other.playgroundOwners.claim(id, 'b', 1)]),
      );
      for (let i = 0; i < ids.length; i++) {
        expect(results[2 * i]).toBe(results[2 * i + 1]);
        expect(await s.playgroundOwners.ownerOf(ids[i] ?? '')).toBe(results[2 * i]);
      }
    });

    it('housekeeping forgets an owner a day after its conversation mapping is gone, never before', async () => {
      const { s } = ctx();
      const now = Date.now();
      const place = { platform: 'playground' as const, channelId: 'kept' };
      await s.conversations.put({ place, botId: 'b', flavor: 'b', upstreamId: 'u', createdAt: 1, lastUsedAt: 1 });
      await s.playgroundOwners.claim('kept', 'alice', now - 2 * DAY);
      await s.playgroundOwners.claim('orphan-old', 'alice', now - 2 * DAY);
      await s.playgroundOwners.claim('orphan-new', 'alice', now - 60_000);
      expect((await s.housekeeping(now)).playgroundOwners).toBe(1);
      expect(await s.playgroundOwners.ownerOf('orphan-old')).toBeUndefined();
      expect(await s.playgroundOwners.ownerOf('orphan-new')).toBe('alice');
      expect(await s.playgroundOwners.ownerOf('kept')).toBe('alice');
    });
  });
}
