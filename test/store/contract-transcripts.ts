import { describe, expect, it } from 'vitest';
import type { ConversationRecord, Place, TranscriptTurn } from '../../src/core/ports.js';
import type { ContractContext } from './contract.js';

// Stored transcripts of a stateless upstream (Chat Completions, issue 40): bounded per
// conversation, reset with the place's mapping, pruned with the mappings; on every backend.

const place = (thread: string): Place => ({
  platform: 'discord',
  workspaceId: 'G1',
  channelId: 'C1',
  threadId: thread,
});
const conv = (thread: string, upstreamId: string, lastUsedAt = 1000): ConversationRecord => ({
  place: place(thread),
  botId: 'model-1',
  flavor: 'chat-completions',
  upstreamId,
  createdAt: 1,
  lastUsedAt,
});
const user = (text: string, at = 1000): TranscriptTurn => ({ role: 'user', text, at });
const bot = (text: string, at = 1000): TranscriptTurn => ({ role: 'assistant', text, at });
const roomy = { maxTurns: 100, maxChars: 100_000 };

export function transcriptContract(ctx: () => ContractContext) {
  describe('transcripts', () => {
    it('keeps turns in order per conversation, readable by another replica', async () => {
      const { s, database } = ctx();
      const t = await database.open();
      expect(await s.transcripts.turns('c1')).toEqual([]);
      await s.transcripts.append('c1', [user('hi'), bot('hello ✓')], roomy);
      await s.transcripts.append('c2', [user('other')], roomy);
      await t.transcripts.append('c1', [user('and then?', 2000), bot('then this', 2000)], roomy);
      expect(await s.transcripts.turns('c1')).toEqual([
        user('hi'),
        bot('hello ✓'),
        user('and then?', 2000),
        bot('then this', 2000),
      ]);
      expect(await t.transcripts.turns('c2')).toEqual([user('other')]);
    });

    it('drops the oldest turns past the turn count, and starts at a user turn', async () => {
      const { s } = ctx();
      const bounds = { maxTurns: 3, maxChars: 100_000 };
      for (let i = 1; i <= 3; i++) await s.transcripts.append('c1', [user(`u${i}`), bot(`a${i}`)], bounds);
      // Kept: a2, u3, a3; a2 is an answer whose question was dropped, so reading starts at u3.
      expect((await s.transcripts.turns('c1')).map((x) => x.text)).toEqual(['u3', 'a3']);
    });

    it('drops the oldest turns past the character budget; the newest turn stays even alone over it', async () => {
      const { s } = ctx();
      const bounds = { maxTurns: 100, maxChars: 10 };
      await s.transcripts.append('c1', [user('aaaa'), bot('bbbb')], bounds);
      await s.transcripts.append('c1', [user('cccc'), bot('dd')], bounds);
      expect((await s.transcripts.turns('c1')).map((x) => x.text)).toEqual(['cccc', 'dd']);
      await s.transcripts.append('c1', [user('x'.repeat(30))], bounds);
      expect((await s.transcripts.turns('c1')).map((x) => x.text)).toEqual(['x'.repeat(30)]);
    });

    it('a reset of the place deletes its transcript; other conversations stay', async () => {
      const { s } = ctx();
      await s.conversations.put(conv('1.1', 'c1'));
      await s.conversations.put(conv('2.2', 'c2'));
      await s.transcripts.append('c1', [user('one'), bot('two')], roomy);
      await s.transcripts.append('c2', [user('three'), bot('four')], roomy);
      await s.conversations.delete(place('1.1'));
      expect(await s.transcripts.turns('c1')).toEqual([]);
      expect((await s.transcripts.turns('c2')).map((x) => x.text)).toEqual(['three', 'four']);
    });

    it('pruning deletes turns older than the cut and turns of conversations no mapping names', async () => {
      const { s } = ctx();
      await s.conversations.put(conv('1.1', 'c1', 500));
      await s.transcripts.append('c1', [user('old', 100), bot('old reply', 100)], roomy);
      await s.transcripts.append('c1', [user('new', 400), bot('new reply', 400)], roomy);
      // A renewed conversation's old transcript: no mapping names it any more.
      await s.transcripts.append('gone', [user('forgotten', 400)], roomy);
      expect(await s.conversations.prune(300)).toBe(0);
      expect((await s.transcripts.turns('c1')).map((x) => x.text)).toEqual(['new', 'new reply']);
      expect(await s.transcripts.turns('gone')).toEqual([]);
    });
  });
}
