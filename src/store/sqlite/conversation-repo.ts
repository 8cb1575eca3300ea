import type Database from 'better-sqlite3';
import { type ConversationRecord, type ExpectedUpstreamId, type Place, placeKey } from '../../core/ports.js';
import { conversationFromRow, conversationParams, type ConversationRow } from '../rows.js';
import { DELETE_CONVERSATION_TURNS, playgroundConversationOf, PRUNE_TURNS } from '../playground-turns.js';
import { DELETE_PLACE_TRANSCRIPT, PRUNE_TRANSCRIPTS } from '../transcripts.js';

// Conversations on SQLite. better-sqlite3 is synchronous and this process holds the only
// connection that writes, so every call is atomic already; the compare-and-set still runs in an
// IMMEDIATE transaction so two processes on one file (a `migrate` next to a running bridge) cannot
// interleave it.

const COLUMNS = `(place_key, platform, workspace_id, channel_id, thread_id, bot_id, flavor, upstream_id, created_at, last_used_at)
     VALUES (@key, @platform, @workspaceId, @channelId, @threadId, @botId, @flavor, @upstreamId, @createdAt, @lastUsedAt)`;

/** The core's ConversationStore, answering at once (store.ts makes it a promise). */
export function createConversationRepo(db: Database.Database) {
  const get = db.prepare<[string], ConversationRow>('SELECT * FROM conversations WHERE place_key = ?');
  const put = db.prepare(
    `INSERT INTO conversations ${COLUMNS}
     ON CONFLICT (place_key) DO UPDATE SET bot_id = excluded.bot_id, flavor = excluded.flavor,
       upstream_id = excluded.upstream_id, created_at = excluded.created_at, last_used_at = excluded.last_used_at`,
  );
  const touch = db.prepare('UPDATE conversations SET last_used_at = ? WHERE place_key = ?');
  const delMapping = db.prepare('DELETE FROM conversations WHERE place_key = ?');
  const delTranscript = db.prepare(DELETE_PLACE_TRANSCRIPT);
  const delTurns = db.prepare(DELETE_CONVERSATION_TURNS);
  // A place's stored transcript (Chat Completions) and what its playground page showed go with
  // its mapping, in one transaction.
  const del = db.transaction((place: Place) => {
    const key = placeKey(place);
    delTranscript.run(key);
    const conversation = playgroundConversationOf(place);
    if (conversation !== undefined) delTurns.run(conversation);
    delMapping.run(key);
  });
  const pruneMappings = db.prepare('DELETE FROM conversations WHERE last_used_at < ?');
  const pruneTranscripts = db.prepare(PRUNE_TRANSCRIPTS);
  const pruneTurns = db.prepare(PRUNE_TURNS);
  const prune = db.transaction((before: number): number => {
    const removed = pruneMappings.run(before).changes;
    pruneTranscripts.run(before);
    pruneTurns.run(before);
    return removed;
  });
  const insertIfAbsent = db.prepare(`INSERT INTO conversations ${COLUMNS} ON CONFLICT (place_key) DO NOTHING`);
  const replaceWhere = (condition: string) =>
    db.prepare(
      `UPDATE conversations SET bot_id = @botId, flavor = @flavor, upstream_id = @upstreamId, created_at = @createdAt,
         last_used_at = @lastUsedAt WHERE place_key = @key AND ${condition}`,
    );
  const replaceIfNull = replaceWhere('upstream_id IS NULL');
  const replaceIfEqual = replaceWhere('upstream_id = @expected');
  const replaceIfUnchanged = db.transaction(
    (place: Place, expected: ExpectedUpstreamId, next: ConversationRecord): boolean => {
      const params = conversationParams(place, next);
      if (expected === undefined) return insertIfAbsent.run(params).changes === 1;
      if (expected === null) return replaceIfNull.run(params).changes === 1;
      return replaceIfEqual.run({ ...params, expected }).changes === 1;
    },
  );
  return {
    get(place: Place): ConversationRecord | undefined {
      const row = get.get(placeKey(place));
      return row ? conversationFromRow(row) : undefined;
    },
    put(rec: ConversationRecord): void {
      put.run(conversationParams(rec.place, rec));
    },
    touch(place: Place, at: number): void {
      touch.run(at, placeKey(place));
    },
    delete(place: Place): void {
      del.immediate(place);
    },
    prune(before: number): number {
      return prune.immediate(before);
    },
    replaceIfUnchanged: (place: Place, expected: ExpectedUpstreamId, next: ConversationRecord): boolean =>
      replaceIfUnchanged.immediate(place, expected, next),
  };
}
