import type { TranscriptStore } from '../../core/ports.js';
import { KEEP_NEWEST, numbered, transcriptFromRows, type TranscriptRow } from '../transcripts.js';
import type { Query } from './query.js';

// Stored transcripts on PostgreSQL, as sqlite/transcript-repo.ts keeps them (see ../transcripts.ts).
// One place's turns are written by one reply at a time (the place's order), so an append is its
// inserts, in order, then the trim; a trim that runs twice keeps the same turns.

const KEEP = numbered(KEEP_NEWEST);

export function pgTranscripts(q: Query): TranscriptStore {
  return {
    async turns(conversationId) {
      const r = await q<TranscriptRow>(
        'SELECT role, text, at FROM transcript_turns WHERE conversation_id = $1 ORDER BY id',
        [conversationId],
      );
      return transcriptFromRows(r.rows);
    },
    async append(conversationId, turns, bounds) {
      if (turns.length === 0) return;
      for (const t of turns) {
        await q('INSERT INTO transcript_turns (conversation_id, role, text, at) VALUES ($1, $2, $3, $4)', [
          conversationId,
          t.role,
          t.text,
          t.at,
        ]);
      }
      await q(KEEP, [conversationId, conversationId, bounds.maxTurns, bounds.maxChars]);
    },
  };
}
