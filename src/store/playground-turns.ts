import type { Place } from '../core/ports.js';

// What a playground page showed of each turn (core PlaygroundTurnStore), as both backends keep it:
// one table, `playground_turns`, whose ids order the turns. The statements are written once here
// with `?` placeholders (the PostgreSQL repo numbers them, transcripts.ts `numbered`).

/** Inserts a turn or replaces what is kept of it; its id (its place in the order) stays. */
export const SAVE_TURN = `INSERT INTO playground_turns (conversation, turn_id, shown, at) VALUES (?, ?, ?, ?)
  ON CONFLICT (conversation, turn_id) DO UPDATE SET shown = excluded.shown, at = excluded.at`;

/** Forgets a conversation's turns older than its newest `keep`. Placeholders: conversation, conversation, keep. */
export const KEEP_NEWEST_TURNS = `DELETE FROM playground_turns WHERE conversation = ? AND id <= (
  SELECT id FROM playground_turns WHERE conversation = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`;

export const LIST_TURNS =
  'SELECT conversation, turn_id, shown, at FROM playground_turns WHERE conversation = ? ORDER BY id';

/** The conversations' retention: a turn not saved since `before` goes (its mapping goes by the same rule). */
export const PRUNE_TURNS = 'DELETE FROM playground_turns WHERE at < ?';

/** A place's turns go with its mapping (a reset): only a playground place has any. */
export const DELETE_CONVERSATION_TURNS = 'DELETE FROM playground_turns WHERE conversation = ?';

/** The conversation a place's turns are kept under, when it is a playground place. */
export function playgroundConversationOf(place: Place): string | undefined {
  return place.platform === 'playground' ? place.channelId : undefined;
}

export interface PlaygroundTurnRow {
  conversation: string;
  turn_id: string;
  shown: string;
  at: number | string;
}

export function turnFromRow(r: PlaygroundTurnRow) {
  // PostgreSQL answers a BIGINT as a string.
  return { conversation: r.conversation, turnId: r.turn_id, shown: r.shown, at: Number(r.at) };
}
