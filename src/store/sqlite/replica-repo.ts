import type Database from 'better-sqlite3';
import type { StoredTicket } from '../ports.js';
import { type LeaseRow, liveLease } from '../rows.js';

// The replicas' registry and their place leases on SQLite (migration 0004), as pg/replica-repo.ts
// keeps them on PostgreSQL: who is alive, who holds a place's lease, who waits in its queue, and what a
// replica leaving a place hands over. One process holds the only connection that writes, so each
// call is atomic; the acquire runs in an IMMEDIATE transaction all the same (another process on
// the file, e.g. `migrate`). Answers at once; store.ts makes each answer a promise.

export function createReplicaRepo(db: Database.Database) {
  const heartbeat = db.prepare(
    `INSERT INTO replicas (replica_id, started_at, heartbeat_at) VALUES (?, ?, ?)
     ON CONFLICT (replica_id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
  );
  const live = db.prepare<[number], { replica_id: string }>(
    'SELECT replica_id FROM replicas WHERE heartbeat_at >= ? ORDER BY replica_id',
  );
  const gone = db.prepare<[number], { replica_id: string }>(
    'SELECT replica_id FROM replicas WHERE heartbeat_at < ? ORDER BY replica_id',
  );
  // `WHERE` before ON CONFLICT: SQLite needs one on an INSERT … SELECT with an upsert clause.
  const acquire = db.prepare(
    `INSERT INTO place_leases (place_key, holder, acquired_at, renewed_at)
     SELECT @key, @holder, @now, @now WHERE @ticket IS NULL OR NOT EXISTS (
       SELECT 1 FROM place_waiters w JOIN replicas rw ON rw.replica_id = w.replica_id
       WHERE w.place_key = @key AND rw.heartbeat_at >= @stale AND w.ticket <> @ticket
         AND (w.arrived_at < @arrived OR (w.arrived_at = @arrived AND w.ticket < @ticket)))
     ON CONFLICT (place_key) DO UPDATE SET
       holder = excluded.holder, renewed_at = excluded.renewed_at,
       acquired_at = CASE WHEN place_leases.holder = excluded.holder THEN place_leases.acquired_at ELSE excluded.acquired_at END
     WHERE place_leases.holder = excluded.holder
        OR (place_leases.renewed_at < @stale
            AND NOT EXISTS (SELECT 1 FROM replicas r WHERE r.replica_id = place_leases.holder AND r.heartbeat_at >= @stale))`,
  );
  const renew = db.prepare('UPDATE place_leases SET renewed_at = ? WHERE place_key = ? AND holder = ?');
  const join = db.prepare(
    `INSERT INTO place_waiters (place_key, ticket, replica_id, arrived_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (place_key, ticket) DO NOTHING`,
  );
  const leaveLine = db.prepare('DELETE FROM place_waiters WHERE place_key = ? AND ticket = ?');
  const forget = db.prepare('DELETE FROM replicas WHERE replica_id = ?');
  const forgetWaiters = db.prepare('DELETE FROM place_waiters WHERE replica_id = ?');
  const acquireInLine = db.transaction(
    (key: string, holder: string, now: number, leaseMs: number, ticket: StoredTicket | undefined): boolean => {
      const params = { key, holder, now, stale: now - leaseMs, ticket: ticket?.id ?? null, arrived: ticket?.at ?? 0 };
      const won = acquire.run(params).changes === 1;
      if (won && ticket !== undefined) leaveLine.run(key, ticket.id);
      return won;
    },
  );
  const release = db.prepare('DELETE FROM place_leases WHERE place_key = ? AND holder = ?');
  const leaveHandover = db.prepare(
    `INSERT INTO place_handover (place_key, replica_id, writes, released_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (place_key) DO UPDATE SET replica_id = excluded.replica_id, writes = excluded.writes,
       released_at = excluded.released_at`,
  );
  const describeLease = db.prepare(
    'UPDATE place_leases SET reply_key = ?, asker_id = ? WHERE place_key = ? AND holder = ?',
  );
  const leaseByReply = db.prepare<[string], LeaseRow>('SELECT * FROM place_leases WHERE reply_key = ?');
  const leaseByPlace = db.prepare<[string], LeaseRow>('SELECT * FROM place_leases WHERE place_key = ?');
  const readHandover = db.prepare<[string], { replica_id: string; writes: string }>(
    'SELECT replica_id, writes FROM place_handover WHERE place_key = ?',
  );
  const holder = db.prepare<[string], { holder: string }>('SELECT holder FROM place_leases WHERE place_key = ?');

  const replicas = {
    heartbeat: (id: string, at: number) => {
      heartbeat.run(id, at, at);
    },
    live: (now: number, leaseMs: number) => live.all(now - leaseMs).map((r) => r.replica_id),
    gone: (now: number, leaseMs: number) => gone.all(now - leaseMs).map((r) => r.replica_id),
    leave: (id: string) => {
      forget.run(id);
      forgetWaiters.run(id);
    },
  };
  const leases = {
    tryAcquire: (key: string, replicaId: string, now: number, leaseMs: number, ticket?: StoredTicket) =>
      acquireInLine.immediate(key, replicaId, now, leaseMs, ticket),
    join: (key: string, ticket: StoredTicket, replicaId: string) => {
      join.run(key, ticket.id, replicaId, ticket.at);
    },
    leave: (key: string, ticketId: string) => {
      leaveLine.run(key, ticketId);
    },
    renew: (key: string, replicaId: string, now: number) => renew.run(now, key, replicaId).changes === 1,
    release: (key: string, replicaId: string, handover?: string) => {
      if (handover !== undefined) leaveHandover.run(key, replicaId, handover, Date.now());
      release.run(key, replicaId);
    },
    describe: (key: string, replicaId: string, replyKey: string, askerId: string) => {
      describeLease.run(replyKey, askerId, key, replicaId);
    },
    findReply: (by: { replyKey: string } | { placeKey: string }) => {
      const row = 'replyKey' in by ? leaseByReply.get(by.replyKey) : leaseByPlace.get(by.placeKey);
      return row === undefined ? undefined : liveLease(row);
    },
    handover: (key: string) => {
      const row = readHandover.get(key);
      return row === undefined ? undefined : { replicaId: row.replica_id, handover: row.writes };
    },
    holder: (key: string) => holder.get(key)?.holder,
  };
  return { replicas, leases };
}
