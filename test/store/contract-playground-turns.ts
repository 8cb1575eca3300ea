import { describe, expect, it } from 'vitest';
import type { ConversationRecord, PlaygroundTurnRecord } from '../../src/core/ports.js';
import type { ContractContext } from './contract.js';

// What playground pages showed (issue 41), kept in the store: a reload after a restart, or on
// another replica, reads it back. Turns keep the order of their first save, a save replaces what
// is kept of a turn, each conversation keeps its newest few, and a turn goes with its
// conversation's mapping (a reset) and by the conversations' retention.

const turn = (conversation: string, turnId: string, shown: string, at = 1000): PlaygroundTurnRecord => ({
  conversation,
  turnId,
  shown,
  at,
});

const mapping = (channelId: string, at: number): ConversationRecord => ({
  place: { platform: 'playground', channelId },
  botId: 'b',
  flavor: 'b',
  upstreamId: `u-${channelId}`,
  createdAt: at,
  lastUsedAt: at,
});

export function playgroundTurnsContract(ctx: () => ContractContext) {
  describe('playground turns', () => {
    it('keeps turns in the order of their first save; a save replaces the turn, for every replica', async () => {
      const { s, database } = ctx();
      expect(await s.playgroundTurns.list('c1')).toEqual([]);
      await s.playgroundTurns.save(turn('c1', 't1', '{"ask":"one"}', 100), 50);
      await s.playgroundTurns.save(turn('c1', 't2', '{"ask":"two"}', 200), 50);
      await s.playgroundTurns.save(turn('c2', 't1', '{"ask":"elsewhere"}', 250), 50);
      // The first turn's reply ended: saved again, it stays first.
      await s.playgroundTurns.save(turn('c1', 't1', '{"ask":"one","replies":[]}', 300), 50);
      const other = await database.open();
      expect(await other.playgroundTurns.list('c1')).toEqual([
        turn('c1', 't1', '{"ask":"one","replies":[]}', 300),
        turn('c1', 't2', '{"ask":"two"}', 200),
      ]);
      expect(await other.playgroundTurns.list('c2')).toEqual([turn('c2', 't1', '{"ask":"elsewhere"}', 250)]);
    });

    it('keeps the newest `keep` turns of a conversation, and those of no other', async () => {
      const { s } = ctx();
      for (let i = 1; i <= 7; i++) await s.playgroundTurns.save(turn('c1', `t${i}`, `${i}`, i), 5);
      await s.playgroundTurns.save(turn('c2', 'x', 'x', 1), 5);
      expect((await s.playgroundTurns.list('c1')).map((t) => t.turnId)).toEqual(['t3', 't4', 't5', 't6', 't7']);
      // An old turn saved again keeps its place, so the bound still drops the oldest.
      await s.playgroundTurns.save(turn('c1', 't3', 'again', 8), 5);
      await s.playgroundTurns.save(turn('c1', 't8', '8', 9), 5);
      expect((await s.playgroundTurns.list('c1')).map((t) => t.turnId)).toEqual(['t4', 't5', 't6', 't7', 't8']);
      expect((await s.playgroundTurns.list('c2')).map((t) => t.turnId)).toEqual(['x']);
    });

    it('a reset (the mapping deleted) forgets the conversation’s turns; other places keep theirs', async () => {
      const { s } = ctx();
      await s.conversations.put(mapping('gone', 1000));
      await s.conversations.put(mapping('stays', 1000));
      await s.playgroundTurns.save(turn('gone', 't1', '1'), 50);
      await s.playgroundTurns.save(turn('stays', 't1', '1'), 50);
      await s.conversations.delete({ platform: 'playground', channelId: 'gone' });
      // A Discord channel named like a playground conversation is another place.
      await s.conversations.delete({ platform: 'discord', channelId: 'stays' });
      expect(await s.playgroundTurns.list('gone')).toEqual([]);
      expect(await s.playgroundTurns.list('stays')).toHaveLength(1);
    });

    it('the conversations’ retention prunes turns not saved since, as it prunes their mappings', async () => {
      const { s } = ctx();
      await s.conversations.put(mapping('old', 100));
      await s.conversations.put(mapping('new', 5000));
      await s.playgroundTurns.save(turn('old', 't1', '1', 100), 50);
      await s.playgroundTurns.save(turn('new', 't1', '1', 900), 50);
      await s.playgroundTurns.save(turn('new', 't2', '2', 5000), 50);
      expect(await s.conversations.prune(1000)).toBe(1);
      expect(await s.playgroundTurns.list('old')).toEqual([]);
      expect((await s.playgroundTurns.list('new')).map((t) => t.turnId)).toEqual(['t2']);
    });
  });
}
