import type Database from 'better-sqlite3';
import type { PlaygroundTurnRecord } from '../../core/ports.js';
import { KEEP_NEWEST_TURNS, LIST_TURNS, type PlaygroundTurnRow, SAVE_TURN, turnFromRow } from '../playground-turns.js';

// What playground pages showed, on SQLite (migration 0014, see ../playground-turns.ts): a save
// and its trim in one transaction.

export function createPlaygroundTurnRepo(db: Database.Database) {
  const save = db.prepare(SAVE_TURN);
  const keepNewest = db.prepare(KEEP_NEWEST_TURNS);
  const list = db.prepare<[string], PlaygroundTurnRow>(LIST_TURNS);
  const saveAndTrim = db.transaction((t: PlaygroundTurnRecord, keep: number) => {
    save.run(t.conversation, t.turnId, t.shown, t.at);
    keepNewest.run(t.conversation, t.conversation, keep);
  });
  return {
    save(turn: PlaygroundTurnRecord, keep: number): void {
      saveAndTrim.immediate(turn, keep);
    },
    list(conversation: string): PlaygroundTurnRecord[] {
      return list.all(conversation).map(turnFromRow);
    },
  };
}
