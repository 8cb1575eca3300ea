import { afterEach, expect, it } from 'vitest';
import { openStore, type Store } from './index.js';

let store: Store | undefined;
afterEach(() => {
  store?.close();
  store = undefined;
});

const open = () => (store = openStore(':memory:', { probeIntervalMs: 0 }));

it('remembers replies, keeps the last vote of a user, and delivers pending votes once', () => {
  const { feedback } = open();
  feedback.rememberReply({
    replyKey: 'r1',
    platform: 'slack',
    placeKey: 'p',
    upstreamId: 'c1',
    messageId: 'm1',
    at: 10,
  });
  expect(feedback.reply('r1')).toEqual({
    replyKey: 'r1',
    platform: 'slack',
    placeKey: 'p',
    upstreamId: 'c1',
    messageId: 'm1',
    at: 10,
  });
  expect(feedback.reply('nope')).toBeUndefined();

  const vote = { replyKey: 'r1', userId: 'U1', placeKey: 'p', upstreamId: 'c1', messageId: 'm1' };
  feedback.vote({ ...vote, vote: 'up', at: 20 });
  feedback.delivered([{ replyKey: 'r1', userId: 'U1' }], 25);
  expect(feedback.pending('c1', 'U1')).toEqual([]);
  // A changed vote replaces the old one and is news again.
  feedback.vote({ ...vote, vote: 'down', at: 30 });
  expect(feedback.pending('c1', 'U1')).toEqual([{ ...vote, vote: 'down', at: 30, deliveredAt: undefined }]);
  expect(feedback.pending('c1', 'U2')).toEqual([]);
  feedback.delivered([{ replyKey: 'r1', userId: 'U1' }], 40);
  expect(feedback.forConversation('c1')).toEqual([{ ...vote, vote: 'down', at: 30, deliveredAt: 40 }]);

  expect(feedback.prune(11)).toBe(1);
  expect(feedback.reply('r1')).toBeUndefined();
  // Votes stay after their reply record is pruned.
  expect(feedback.forConversation('c1')).toHaveLength(1);
});
