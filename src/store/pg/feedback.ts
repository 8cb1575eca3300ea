import type { FeedbackReply, FeedbackStore, FeedbackVote } from '../../core/ports.js';
import { type ReplyRow, toReply, toVote, type VoteRow } from '../rows.js';
import type { Query } from './coordination.js';

// Votes on replies (FEEDBACK) on PostgreSQL (migration postgres/0002), as feedback-repo.ts keeps
// them on SQLite: the same tables, rows and mapping. Each operation is one statement, so a vote
// and its delivery on two replicas settle in the database: a vote changed after it was sent
// upstream is pending again, and `delivered` marks only what is still pending.
//
// Ties in time are broken by reply_key in byte order (COLLATE "C"), as SQLite orders TEXT.

const VOTE_COLUMNS = 'reply_key, user_id, place_key, upstream_id, message_id, vote, voted_at, delivered_at';

export function pgFeedback(q: Query): FeedbackStore {
  return {
    async rememberReply(r: FeedbackReply) {
      await q(
        `INSERT INTO feedback_replies (reply_key, platform, place_key, upstream_id, message_id, finished_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (reply_key) DO UPDATE SET platform = excluded.platform, place_key = excluded.place_key,
           upstream_id = excluded.upstream_id, message_id = excluded.message_id, finished_at = excluded.finished_at`,
        [r.replyKey, r.platform, r.placeKey, r.upstreamId ?? null, r.messageId, r.at],
      );
    },
    async reply(replyKey) {
      const r = await q<ReplyRow>('SELECT * FROM feedback_replies WHERE reply_key = $1', [replyKey]);
      const row = r.rows[0];
      return row === undefined ? undefined : toReply(row);
    },
    async vote(v: Omit<FeedbackVote, 'deliveredAt'>) {
      // A changed vote is news again: it goes upstream with the user's next message.
      await q(
        `INSERT INTO feedback_votes (${VOTE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)
         ON CONFLICT (reply_key, user_id) DO UPDATE SET vote = excluded.vote, voted_at = excluded.voted_at,
           delivered_at = NULL`,
        [v.replyKey, v.userId, v.placeKey, v.upstreamId ?? null, v.messageId, v.vote, v.at],
      );
    },
    async pending(upstreamId, userId) {
      const r = await q<VoteRow>(
        `SELECT ${VOTE_COLUMNS} FROM feedback_votes WHERE upstream_id = $1 AND user_id = $2 AND delivered_at IS NULL
         ORDER BY voted_at, reply_key COLLATE "C"`,
        [upstreamId, userId],
      );
      return r.rows.map(toVote);
    },
    async delivered(votes, at) {
      if (votes.length === 0) return;
      // One statement for the batch: all of it is marked, or none.
      await q(
        `UPDATE feedback_votes f SET delivered_at = $1
         FROM unnest($2::text[], $3::text[]) AS d(reply_key, user_id)
         WHERE f.reply_key = d.reply_key AND f.user_id = d.user_id AND f.delivered_at IS NULL`,
        [at, votes.map((v) => v.replyKey), votes.map((v) => v.userId)],
      );
    },
    async forConversation(upstreamId) {
      const r = await q<VoteRow>(
        `SELECT ${VOTE_COLUMNS} FROM feedback_votes WHERE upstream_id = $1 ORDER BY voted_at, reply_key COLLATE "C"`,
        [upstreamId],
      );
      return r.rows.map(toVote);
    },
    async prune(before) {
      return (await q('DELETE FROM feedback_replies WHERE finished_at < $1', [before])).rowCount ?? 0;
    },
    async pruneVotes(before) {
      return (await q('DELETE FROM feedback_votes WHERE voted_at < $1', [before])).rowCount ?? 0;
    },
  };
}
