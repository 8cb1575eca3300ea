import type Database from 'better-sqlite3';
import type { InFlightBegin, InFlightState, Platform } from '../../core/ports.js';
import type { OwnedInFlightRecord } from '../ports.js';
import { type InFlightRow, ownedFromRow } from '../rows.js';

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
