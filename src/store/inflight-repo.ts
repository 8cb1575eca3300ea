import type { OwnedInFlightRecord } from './async-port.js';
import type Database from 'better-sqlite3';
import {
  type InFlightRecord,
  type InFlightState,
  type Immediate,
  type InFlightStore,
  type Platform,
  readReplyTarget,
} from '../core/ports.js';

export interface Row {
  id: number;
  platform: string;
  event_id: string;
  target: string;
  message_ids: string;
  last_text: string;
  upstream_id: string | null;
  state: InFlightState;
  started_at: number;
  updated_at: number;
}

export function toRecord(r: Row): InFlightRecord {
  return {
    id: r.id,
    platform: r.platform as Platform,
    eventId: r.event_id,
    target: readReplyTarget(JSON.parse(r.target)),
    messageIds: JSON.parse(r.message_ids) as string[],
    lastText: r.last_text,
    upstreamId: r.upstream_id ?? undefined,
    state: r.state,
    startedAt: r.started_at,
    updatedAt: r.updated_at,
  };
}

/** A row of the async port's stores, which also name the replica that owns the reply. */
export interface OwnedRow extends Row {
  owner: string;
}

export const toOwnedRecord = (r: OwnedRow): OwnedInFlightRecord => ({ ...toRecord(r), owner: r.owner });

export function createInFlightRepo(db: Database.Database): Immediate<InFlightStore> {
  const begin = db.prepare(
    `INSERT INTO replies_in_flight (platform, event_id, target, upstream_id, started_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const progress = db.prepare(
    'UPDATE replies_in_flight SET message_ids = ?, last_text = ?, updated_at = ? WHERE id = ?',
  );
  const setUpstream = db.prepare('UPDATE replies_in_flight SET upstream_id = ? WHERE id = ?');
  const finish = db.prepare('UPDATE replies_in_flight SET state = ?, updated_at = ? WHERE id = ?');
  const listAll = db.prepare<[], Row>("SELECT * FROM replies_in_flight WHERE state = 'streaming' ORDER BY id");
  const listFor = db.prepare<[string], Row>(
    "SELECT * FROM replies_in_flight WHERE state = 'streaming' AND platform = ? ORDER BY id",
  );
  const prune = db.prepare("DELETE FROM replies_in_flight WHERE state <> 'streaming' AND updated_at < ?");
  return {
    begin(rec) {
      const info = begin.run(
        rec.platform,
        rec.eventId,
        JSON.stringify(rec.target),
        rec.upstreamId ?? null,
        rec.at,
        rec.at,
      );
      return Number(info.lastInsertRowid);
    },
    progress(id, messageIds, lastText, at) {
      progress.run(JSON.stringify(messageIds), lastText, at, id);
    },
    setUpstreamId(id, upstreamId) {
      setUpstream.run(upstreamId, id);
    },
    finish(id, state, at) {
      finish.run(state, at, id);
    },
    listOpen(platform) {
      return (platform === undefined ? listAll.all() : listFor.all(platform)).map(toRecord);
    },
    prune(before) {
      return prune.run(before).changes;
    },
  };
}
