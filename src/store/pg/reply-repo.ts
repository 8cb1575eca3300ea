import type { FeedbackReply, FeedbackStore, FeedbackVote } from '../../core/ports.js';
import type { AsyncStore } from '../ports.js';
import { ownedFromRow, type InFlightRow, type ReplyRow, toReply, toVote, type VoteRow } from '../rows.js';
import { ASYNC_COMMIT, changed, type Query } from './query.js';

// A reply's rows on PostgreSQL, as sqlite/reply-repo.ts keeps them on SQLite (the same tables,
// rows and mapping): while it streams, the reply in flight (replies_in_flight, with the replica
// that owns it: a claim is one conditional UPDATE, so of two replicas taking over one reply
// exactly one wins); once finished, the reply remembered for votes and the votes on it
// (migration postgres/0002). Each vote operation is one statement, so a vote and its delivery on
// two replicas settle in the database: a vote changed after it was sent upstream is pending
// again, and `delivered` marks only what is still pending.
//
// Ties in time are broken by reply_key in byte order (COLLATE "C"), as SQLite orders TEXT.

export function pgInFlight(q: Query): AsyncStore['inflight'] {
  return {
    async begin(rec) {
      const r = await q<{ id: number }>(
        `INSERT INTO replies_in_flight (platform, event_id, target, upstream_id, owner, started_at, updated_at)
         SELECT $1, $2, $3, $4, $5, $6, $6 FROM ${ASYNC_COMMIT} RETURNING id`,
        [rec.platform, rec.eventId, JSON.stringify(rec.target), rec.upstreamId ?? null, rec.owner, rec.at],
      );
      const id = r.rows[0]?.id;
      if (id === undefined) throw new Error('INSERT ... RETURNING id returned no row');
      return id;
    },
    async progress(id, messageIds, lastText, at) {
      await q(
        `UPDATE replies_in_flight SET message_ids = $1, last_text = $2, updated_at = $3 FROM ${ASYNC_COMMIT} WHERE id = $4`,
        [JSON.stringify(messageIds), lastText, at, id],
      );
    },
    async setUpstreamId(id, upstreamId) {
      await q('UPDATE replies_in_flight SET upstream_id = $1 WHERE id = $2', [upstreamId, id]);
    },
    async finish(id, state, at) {
      await q('UPDATE replies_in_flight SET state = $1, updated_at = $2 WHERE id = $3', [state, at, id]);
    },
    async listOpen(platform) {
      const r =
        platform === undefined
          ? await q<InFlightRow>("SELECT * FROM replies_in_flight WHERE state = 'streaming' ORDER BY id")
          : await q<InFlightRow>(
              "SELECT * FROM replies_in_flight WHERE state = 'streaming' AND platform = $1 ORDER BY id",
              [platform],
            );
      return r.rows.map(ownedFromRow);
    },
    async listOpenOwnedBy(owners) {
      if (owners.length === 0) return [];
      const r = await q<InFlightRow>(
        "SELECT * FROM replies_in_flight WHERE state = 'streaming' AND owner = ANY($1::text[]) ORDER BY id",
        [[...owners]],
      );
      return r.rows.map(ownedFromRow);
    },
    async claim(id, from, to, at) {
      return changed(
        await q(
          "UPDATE replies_in_flight SET owner = $1, updated_at = $2 WHERE id = $3 AND owner = $4 AND state = 'streaming'",
          [to, at, id, from],
        ),
      );
    },
    async prune(before) {
      return (
        (await q("DELETE FROM replies_in_flight WHERE state <> 'streaming' AND updated_at < $1", [before])).rowCount ??
        0
      );
    },
  };
}

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
