import type { PlaygroundTurnStore } from '../../core/ports.js';
import { KEEP_NEWEST_TURNS, LIST_TURNS, type PlaygroundTurnRow, SAVE_TURN, turnFromRow } from '../playground-turns.js';
import { numbered } from '../transcripts.js';
import type { Query } from './query.js';

// What playground pages showed, on PostgreSQL (migration postgres/0011), as
// sqlite/playground-turn-repo.ts keeps it. One conversation's turns are saved by its one page's
// turns; a trim that runs twice keeps the same turns.

const SAVE = numbered(SAVE_TURN);
const KEEP = numbered(KEEP_NEWEST_TURNS);
const LIST = numbered(LIST_TURNS);

export function pgPlaygroundTurns(q: Query): PlaygroundTurnStore {
  return {
    async save(t, keep) {
      await q(SAVE, [t.conversation, t.turnId, t.shown, t.at]);
      await q(KEEP, [t.conversation, t.conversation, keep]);
    },
    async list(conversation) {
      return (await q<PlaygroundTurnRow>(LIST, [conversation])).rows.map(turnFromRow);
    },
  };
}
