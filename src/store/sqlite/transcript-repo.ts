import type Database from 'better-sqlite3';
import type { TranscriptBounds, TranscriptTurn } from '../../core/ports.js';
import { KEEP_NEWEST, transcriptFromRows, type TranscriptRow } from '../transcripts.js';

// Stored transcripts on SQLite (see ../transcripts.ts): an append and its trim in one transaction.

export function createTranscriptRepo(db: Database.Database) {
  const select = db.prepare<[string], TranscriptRow>(
    'SELECT role, text, at FROM transcript_turns WHERE conversation_id = ? ORDER BY id',
  );
  const insert = db.prepare('INSERT INTO transcript_turns (conversation_id, role, text, at) VALUES (?, ?, ?, ?)');
  const keep = db.prepare(KEEP_NEWEST);
  const append = db.transaction((id: string, turns: readonly TranscriptTurn[], bounds: TranscriptBounds) => {
    for (const t of turns) insert.run(id, t.role, t.text, t.at);
    keep.run(id, id, bounds.maxTurns, bounds.maxChars);
  });
  return {
    turns: (conversationId: string): TranscriptTurn[] => transcriptFromRows(select.all(conversationId)),
    append(conversationId: string, turns: readonly TranscriptTurn[], bounds: TranscriptBounds): void {
      if (turns.length > 0) append.immediate(conversationId, turns, bounds);
    },
  };
}
