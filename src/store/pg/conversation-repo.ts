import { type ConversationRecord, type ExpectedUpstreamId, type Place, placeKey } from '../../core/ports.js';
import type { AsyncStore } from '../ports.js';
import { conversationFromRow, conversationParams, type ConversationRow } from '../rows.js';
import { DELETE_CONVERSATION_TURNS, playgroundConversationOf, PRUNE_TURNS } from '../playground-turns.js';
import { DELETE_PLACE_TRANSCRIPT, numbered, PRUNE_TRANSCRIPTS } from '../transcripts.js';
import { ASYNC_COMMIT, changed, type Query } from './query.js';

// Conversations on PostgreSQL, as sqlite/conversation-repo.ts keeps them: the same table, rows and
// mapping. The compare-and-set (replaceIfUnchanged) is one conditional statement: under READ
// COMMITTED the second writer waits for the first's row lock, then re-checks against its row.

const CONVERSATION_VALUES = `($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`;
const CONVERSATION_COLUMNS = `(place_key, platform, workspace_id, channel_id, thread_id, bot_id, flavor, upstream_id, created_at, last_used_at)`;

function conversationArgs(place: Place, rec: ConversationRecord): unknown[] {
  const p = conversationParams(place, rec);
  return [
    p.key,
    p.platform,
    p.workspaceId,
    p.channelId,
    p.threadId,
    p.botId,
    p.flavor,
    p.upstreamId,
    p.createdAt,
    p.lastUsedAt,
  ];
}

export function pgConversations(q: Query): AsyncStore['conversations'] {
  return {
    async get(place) {
      const r = await q<ConversationRow>('SELECT * FROM conversations WHERE place_key = $1', [placeKey(place)]);
      const row = r.rows[0];
      return row ? conversationFromRow(row) : undefined;
    },
    async put(rec) {
      await q(
        `INSERT INTO conversations ${CONVERSATION_COLUMNS} VALUES ${CONVERSATION_VALUES}
         ON CONFLICT (place_key) DO UPDATE SET bot_id = excluded.bot_id, flavor = excluded.flavor,
           upstream_id = excluded.upstream_id, created_at = excluded.created_at, last_used_at = excluded.last_used_at`,
        conversationArgs(rec.place, rec),
      );
    },
    async touch(place, at) {
      await q(`UPDATE conversations SET last_used_at = $1 FROM ${ASYNC_COMMIT} WHERE place_key = $2`, [
        at,
        placeKey(place),
      ]);
    },
    async prune(before) {
      const removed = (await q('DELETE FROM conversations WHERE last_used_at < $1', [before])).rowCount ?? 0;
      // Stored transcripts (Chat Completions) go with the mappings that name them.
      await q(numbered(PRUNE_TRANSCRIPTS), [before]);
      // And what playground pages showed (retention by the same rule).
      await q(numbered(PRUNE_TURNS), [before]);
      return removed;
    },
    async delete(place) {
      // The place's stored transcript first: the mapping names it.
      await q(numbered(DELETE_PLACE_TRANSCRIPT), [placeKey(place)]);
      // What its playground page showed (a reset starts an empty page).
      const conversation = playgroundConversationOf(place);
      if (conversation !== undefined) await q(numbered(DELETE_CONVERSATION_TURNS), [conversation]);
      await q('DELETE FROM conversations WHERE place_key = $1', [placeKey(place)]);
    },
    async replaceIfUnchanged(place: Place, expected: ExpectedUpstreamId, next: ConversationRecord) {
      const args = conversationArgs(place, next);
      if (expected === undefined) {
        return changed(
          await q(
            `INSERT INTO conversations ${CONVERSATION_COLUMNS} VALUES ${CONVERSATION_VALUES} ON CONFLICT (place_key) DO NOTHING`,
            args,
          ),
        );
      }
      if (expected === null) {
        return changed(
          await q(
            `UPDATE conversations SET bot_id = $2, flavor = $3, upstream_id = $4, created_at = $5, last_used_at = $6
             WHERE place_key = $1 AND upstream_id IS NULL`,
            [args[0], args[5], args[6], args[7], args[8], args[9]],
          ),
        );
      }
      return changed(
        await q(
          `UPDATE conversations SET bot_id = $2, flavor = $3, upstream_id = $4, created_at = $5, last_used_at = $6
           WHERE place_key = $1 AND upstream_id = $7`,
          [args[0], args[5], args[6], args[7], args[8], args[9], expected],
        ),
      );
    },
  };
}
