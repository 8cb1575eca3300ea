import { afterEach, expect, it } from 'vitest';
import { openStore, type SqliteStore } from './index.js';

let store: SqliteStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

const open = () => (store = openStore(':memory:', { checkIntervalMs: 0 }));

it('remembers replies, keeps the last vote of a user, and delivers pending votes once', async () => {
  const { feedback } = open();
  await feedback.rememberReply({
    replyKey: 'r1',
    platform: 'slack',
    placeKey: 'p',
    upstreamId: 'c1',
    messageId: 'm1',
    at: 10,
  });
  expect(await feedback.reply('r1')).toEqual({
    replyKey: 'r1',
    platform: 'slack',
    placeKey: 'p',
    upstreamId: 'c1',
    messageId: 'm1',
    at: 10,
  });
  expect(await feedback.reply('nope')).toBeUndefined();

  const vote = { replyKey: 'r1', userId: 'U1', placeKey: 'p', upstreamId: 'c1', messageId: 'm1' };
  await feedback.vote({ ...vote, vote: 'up', at: 20 });
  await feedback.delivered([{ replyKey: 'r1', userId: 'U1' }], 25);
  expect(await feedback.pending('c1', 'U1')).toEqual([]);
  // A changed vote replaces the old one and is news again.
  await feedback.vote({ ...vote, vote: 'down', at: 30 });
  expect(await feedback.pending('c1', 'U1')).toEqual([{ ...vote, vote: 'down', at: 30, deliveredAt: undefined }]);
  expect(await feedback.pending('c1', 'U2')).toEqual([]);
  await feedback.delivered([{ replyKey: 'r1', userId: 'U1' }], 40);
  expect(await feedback.forConversation('c1')).toEqual([{ ...vote, vote: 'down', at: 30, deliveredAt: 40 }]);

  expect(await feedback.prune(11)).toBe(1);
  expect(await feedback.reply('r1')).toBeUndefined();
  // Votes stay after their reply record is pruned.
  expect(await feedback.forConversation('c1')).toHaveLength(1);
});
