import type { TranscriptTurn } from '../core/ports.js';

// The stored transcripts (core TranscriptStore) as both backends keep them: one table,
// `transcript_turns`, whose ids order the turns. What is kept is decided by one statement each
// backend runs after an append (KEEP_NEWEST): the newest `maxTurns` turns whose characters add
// up to at most `maxChars`, the newest one always. Reading drops assistant turns left at the
// start (their user turn went first), so a transcript sent upstream starts with a user turn.

export interface TranscriptRow {
  role: string;
  text: string;
  at: number;
}

/**
 * Deletes a conversation's turns older than the oldest one kept. Placeholders: conversation id,
 * max turns, max chars (`?` for SQLite; the PostgreSQL repo numbers them).
 */
export const KEEP_NEWEST = `DELETE FROM transcript_turns WHERE conversation_id = ? AND id < (
  SELECT COALESCE(MIN(id), 0) FROM (
    SELECT id,
      ROW_NUMBER() OVER (ORDER BY id DESC) AS n,
      SUM(LENGTH(text)) OVER (ORDER BY id DESC ROWS UNBOUNDED PRECEDING) AS chars
    FROM transcript_turns WHERE conversation_id = ?
  ) newest WHERE n <= ? AND (chars <= ? OR n = 1))`;

/** Turns no longer needed: older than the retention, or of a conversation no mapping names. */
export const PRUNE_TRANSCRIPTS = `DELETE FROM transcript_turns WHERE at < ? OR conversation_id NOT IN (
  SELECT upstream_id FROM conversations WHERE upstream_id IS NOT NULL)`;

/** A place's transcript goes with its mapping (a reset forgets the conversation). */
export const DELETE_PLACE_TRANSCRIPT = `DELETE FROM transcript_turns WHERE conversation_id IN (
  SELECT upstream_id FROM conversations WHERE place_key = ? AND upstream_id IS NOT NULL)`;

/** `?` placeholders → `$1, $2, …` (PostgreSQL). */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

export function transcriptFromRows(rows: readonly TranscriptRow[]): TranscriptTurn[] {
  const first = rows.findIndex((r) => r.role === 'user');
  if (first === -1) return [];
  return rows
    .slice(first)
    .map((r) => ({ role: r.role === 'assistant' ? 'assistant' : 'user', text: r.text, at: r.at }));
}
