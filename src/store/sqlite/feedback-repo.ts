import type Database from 'better-sqlite3';
import type { FeedbackReply, FeedbackVote } from '../../core/ports.js';
import { type ReplyRow, toReply, toVote, type VoteRow } from '../rows.js';

// Votes on replies (FEEDBACK): the replies that showed the buttons, and each user's last vote.
// The rows and their mapping are shared with PostgreSQL (rows.ts): one table layout.

/** The core's FeedbackStore, answering at once (store.ts makes it a promise). */
export function createFeedbackRepo(db: Database.Database) {
  const remember = db.prepare(
    `INSERT OR REPLACE INTO feedback_replies (reply_key, platform, place_key, upstream_id, message_id, finished_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const getReply = db.prepare<[string], ReplyRow>('SELECT * FROM feedback_replies WHERE reply_key = ?');
  // A changed vote is news again: it goes upstream with the user's next message.
  const upsert = db.prepare(
    `INSERT INTO feedback_votes (reply_key, user_id, place_key, upstream_id, message_id, vote, voted_at, delivered_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, NULL)
     ON CONFLICT (reply_key, user_id) DO UPDATE SET vote = excluded.vote, voted_at = excluded.voted_at,
       delivered_at = NULL`,
  );
  const pending = db.prepare<[string, string], VoteRow>(
    `SELECT * FROM feedback_votes WHERE upstream_id = ? AND user_id = ? AND delivered_at IS NULL
     ORDER BY voted_at, reply_key`,
  );
  const deliver = db.prepare(
    'UPDATE feedback_votes SET delivered_at = ? WHERE reply_key = ? AND user_id = ? AND delivered_at IS NULL',
  );
  const forConversation = db.prepare<[string], VoteRow>(
    'SELECT * FROM feedback_votes WHERE upstream_id = ? ORDER BY voted_at, reply_key',
  );
  const prune = db.prepare('DELETE FROM feedback_replies WHERE finished_at < ?');
  const pruneVotes = db.prepare('DELETE FROM feedback_votes WHERE voted_at < ?');
  const deliverAll = db.transaction((votes: { replyKey: string; userId: string }[], at: number) => {
    for (const v of votes) deliver.run(at, v.replyKey, v.userId);
  });
  return {
    rememberReply(r: FeedbackReply): void {
      remember.run(r.replyKey, r.platform, r.placeKey, r.upstreamId ?? null, r.messageId, r.at);
    },
    reply(replyKey: string): FeedbackReply | undefined {
      const r = getReply.get(replyKey);
      return r === undefined ? undefined : toReply(r);
    },
    vote(v: Omit<FeedbackVote, 'deliveredAt'>): void {
      upsert.run(v.replyKey, v.userId, v.placeKey, v.upstreamId ?? null, v.messageId, v.vote, v.at);
    },
    pending(upstreamId: string, userId: string): FeedbackVote[] {
      return pending.all(upstreamId, userId).map(toVote);
    },
    delivered(votes: { replyKey: string; userId: string }[], at: number): void {
      deliverAll(votes, at);
    },
    forConversation(upstreamId: string): FeedbackVote[] {
      return forConversation.all(upstreamId).map(toVote);
    },
    pruneVotes(before: number): number {
      return pruneVotes.run(before).changes;
    },
    prune(before: number): number {
      return prune.run(before).changes;
    },
  };
}
