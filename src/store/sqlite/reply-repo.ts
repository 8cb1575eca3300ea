import type Database from 'better-sqlite3';
import type { FeedbackReply, FeedbackVote, InFlightBegin, InFlightState, Platform } from '../../core/ports.js';
import type { OwnedInFlightRecord } from '../ports.js';
import { type InFlightRow, ownedFromRow, type ReplyRow, toReply, toVote, type VoteRow } from '../rows.js';

// A reply's rows on SQLite, as pg/reply-repo.ts keeps them on PostgreSQL: while it streams, the
// reply in flight (replies_in_flight: recovery after a crash, takeover by another replica); once
// finished, the reply remembered for votes and the votes on it (feedback_replies, feedback_votes).
// One message writes both, so they are one file.

/** Replies in flight on SQLite, with the replica that owns each (migration 0004); store.ts makes each answer a promise. */
export type InFlightRepo = ReturnType<typeof createInFlightRepo>;

export function createInFlightRepo(db: Database.Database) {
  const begin = db.prepare(
    `INSERT INTO replies_in_flight (platform, event_id, target, upstream_id, owner, started_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const progress = db.prepare(
    'UPDATE replies_in_flight SET message_ids = ?, last_text = ?, updated_at = ? WHERE id = ?',
  );
  const setUpstream = db.prepare('UPDATE replies_in_flight SET upstream_id = ? WHERE id = ?');
  const finish = db.prepare('UPDATE replies_in_flight SET state = ?, updated_at = ? WHERE id = ?');
  const listAll = db.prepare<[], InFlightRow>("SELECT * FROM replies_in_flight WHERE state = 'streaming' ORDER BY id");
  const listFor = db.prepare<[string], InFlightRow>(
    "SELECT * FROM replies_in_flight WHERE state = 'streaming' AND platform = ? ORDER BY id",
  );
  const listOwned = db.prepare<[string], InFlightRow>(
    `SELECT * FROM replies_in_flight WHERE state = 'streaming'
       AND owner IN (SELECT value FROM json_each(?)) ORDER BY id`,
  );
  const claim = db.prepare(
    "UPDATE replies_in_flight SET owner = ?, updated_at = ? WHERE id = ? AND owner = ? AND state = 'streaming'",
  );
  const prune = db.prepare("DELETE FROM replies_in_flight WHERE state <> 'streaming' AND updated_at < ?");
  return {
    begin(rec: InFlightBegin): number {
      const target = JSON.stringify(rec.target);
      const info = begin.run(
        rec.platform,
        rec.eventId,
        target,
        rec.upstreamId ?? null,
        rec.owner ?? '',
        rec.at,
        rec.at,
      );
      return Number(info.lastInsertRowid);
    },
    progress(id: number, messageIds: string[], lastText: string, at: number): void {
      progress.run(JSON.stringify(messageIds), lastText, at, id);
    },
    setUpstreamId(id: number, upstreamId: string): void {
      setUpstream.run(upstreamId, id);
    },
    finish(id: number, state: Exclude<InFlightState, 'streaming'>, at: number): void {
      finish.run(state, at, id);
    },
    listOpen(platform?: Platform): OwnedInFlightRecord[] {
      return (platform === undefined ? listAll.all() : listFor.all(platform)).map(ownedFromRow);
    },
    listOpenOwnedBy: (owners: readonly string[]): OwnedInFlightRecord[] =>
      owners.length === 0 ? [] : listOwned.all(JSON.stringify(owners)).map(ownedFromRow),
    claim: (id: number, from: string, to: string, at: number): boolean => claim.run(to, at, id, from).changes === 1,
    prune(before: number): number {
      return prune.run(before).changes;
    },
  };
}

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
