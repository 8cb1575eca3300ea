import { describe, expect, it } from 'vitest';
import type { FeedbackVote } from '../../src/core/ports.js';
import type { ContractContext } from './contract.js';

// The contract's feedback cases (the core's FeedbackStore, src/core/store-ports.ts), on every backend.

type NewVote = Omit<FeedbackVote, 'deliveredAt'>;

const vote = (replyKey: string, userId: string, v: 'up' | 'down', at: number, upstreamId = 'c1'): NewVote => ({
  replyKey,
  userId,
  placeKey: 'slack:T1:C1:171.5',
  upstreamId,
  messageId: `m-${replyKey}`,
  vote: v,
  at,
});

const pending = (v: NewVote): FeedbackVote => ({ ...v, deliveredAt: undefined });

export function feedbackContract(ctx: () => ContractContext) {
  describe('feedback', () => {
    it('remembers replies, replacing one remembered again; an unnamed conversation as undefined', async () => {
      const { s } = ctx();
      const reply = { replyKey: 'r1', platform: 'slack' as const, placeKey: 'p', messageId: 'm1', at: 10 };
      await s.feedback.rememberReply({ ...reply, upstreamId: undefined });
      expect(await s.feedback.reply('r1')).toEqual({ ...reply, upstreamId: undefined });
      await s.feedback.rememberReply({ ...reply, upstreamId: 'c1', messageId: 'm2', at: 20 });
      expect(await s.feedback.reply('r1')).toEqual({ ...reply, upstreamId: 'c1', messageId: 'm2', at: 20 });
      expect(await s.feedback.reply('nope')).toBeUndefined();
    });

    it('the last vote of a user wins and is pending again, also when another replica casts it', async () => {
      const { s, database } = ctx();
      const t = await database.open();
      await s.feedback.vote(vote('r1', 'U1', 'up', 20));
      await s.feedback.delivered([{ replyKey: 'r1', userId: 'U1' }], 25);
      expect(await s.feedback.pending('c1', 'U1')).toEqual([]);

      await t.feedback.vote(vote('r1', 'U1', 'down', 30));
      expect(await s.feedback.pending('c1', 'U1')).toEqual([pending(vote('r1', 'U1', 'down', 30))]);
      // One row per user and reply, whatever the history of votes.
      expect(await s.feedback.forConversation('c1')).toEqual([pending(vote('r1', 'U1', 'down', 30))]);
      // Another user's votes, and other conversations, are not this user's pending ones.
      await s.feedback.vote(vote('r1', 'U2', 'up', 31));
      await s.feedback.vote(vote('r2', 'U1', 'up', 32, 'c2'));
      expect(await t.feedback.pending('c1', 'U1')).toEqual([pending(vote('r1', 'U1', 'down', 30))]);
      expect(await t.feedback.pending('c1', 'U3')).toEqual([]);
    });

    it('delivered marks only the votes named, and only while they are pending', async () => {
      const { s, database } = ctx();
      for (const v of [vote('r1', 'U1', 'up', 1), vote('r2', 'U1', 'down', 2), vote('r3', 'U1', 'up', 3)]) {
        await s.feedback.vote(v);
      }
      await s.feedback.delivered([], 5); // nothing to mark: fine
      await s.feedback.delivered(
        [
          { replyKey: 'r1', userId: 'U1' },
          { replyKey: 'r3', userId: 'U1' },
          { replyKey: 'r9', userId: 'U1' }, // no such vote: ignored
        ],
        10,
      );
      expect(await s.feedback.pending('c1', 'U1')).toEqual([pending(vote('r2', 'U1', 'down', 2))]);
      // Delivered again (a second replica sending the same vote): the first time stays.
      const t = await database.open();
      await t.feedback.delivered([{ replyKey: 'r1', userId: 'U1' }], 99);
      expect((await s.feedback.forConversation('c1')).map((v) => [v.replyKey, v.deliveredAt])).toEqual([
        ['r1', 10],
        ['r2', undefined],
        ['r3', 10],
      ]);
    });

    it('lists a conversation’s votes oldest first, ties by reply key, every user', async () => {
      const { s } = ctx();
      await s.feedback.vote(vote('r-b', 'U1', 'up', 50));
      await s.feedback.vote(vote('r-a', 'U2', 'down', 50));
      await s.feedback.vote(vote('r-c', 'U1', 'down', 40));
      await s.feedback.vote(vote('r-B', 'U3', 'up', 50)); // byte order: 'B' before 'a' and 'b'
      await s.feedback.vote(vote('r-z', 'U1', 'up', 10, 'other'));
      expect((await s.feedback.forConversation('c1')).map((v) => `${v.replyKey}/${v.userId}`)).toEqual([
        'r-c/U1',
        'r-B/U3',
        'r-a/U2',
        'r-b/U1',
      ]);
      expect(await s.feedback.pending('c1', 'U1')).toEqual([
        pending(vote('r-c', 'U1', 'down', 40)),
        pending(vote('r-b', 'U1', 'up', 50)),
      ]);
      expect(await s.feedback.forConversation('none')).toEqual([]);
    });

    it('prune forgets replies remembered before the cut, never votes', async () => {
      const { s } = ctx();
      const reply = (replyKey: string, at: number) => ({
        replyKey,
        platform: 'discord' as const,
        placeKey: 'discord::42:',
        upstreamId: 'c1',
        messageId: `m-${replyKey}`,
        at,
      });
      await s.feedback.rememberReply(reply('old', 100));
      await s.feedback.rememberReply(reply('new', 200));
      await s.feedback.vote(vote('old', 'U1', 'up', 150));
      expect(await s.feedback.prune(200)).toBe(1);
      expect(await s.feedback.reply('old')).toBeUndefined();
      expect(await s.feedback.reply('new')).toEqual(reply('new', 200));
      expect(await s.feedback.forConversation('c1')).toEqual([pending(vote('old', 'U1', 'up', 150))]);
      expect(await s.feedback.prune(200)).toBe(0);
    });
  });
}
