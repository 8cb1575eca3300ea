import type { PlaceLeases, ReplicaRegistry } from '../ports.js';
import { type LeaseRow, liveLease } from '../rows.js';
import { ASYNC_COMMIT, changed, type Query } from './query.js';

// What several replicas coordinate through PostgreSQL, as sqlite/replica-repo.ts keeps it on
// SQLite: heartbeats (who is alive), per-place leases (who holds a place's lease, who waits in its queue)
// and what a replica leaving a place hands over.

export function pgReplicas(q: Query): ReplicaRegistry {
  return {
    async heartbeat(id, at) {
      await q(
        `INSERT INTO replicas (replica_id, started_at, heartbeat_at) VALUES ($1, $2, $2)
         ON CONFLICT (replica_id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
        [id, at],
      );
    },
    async live(now, leaseMs) {
      const r = await q<{ replica_id: string }>(
        'SELECT replica_id FROM replicas WHERE heartbeat_at >= $1 ORDER BY replica_id',
        [now - leaseMs],
      );
      return r.rows.map((x) => x.replica_id);
    },
    async gone(now, leaseMs) {
      const r = await q<{ replica_id: string }>(
        'SELECT replica_id FROM replicas WHERE heartbeat_at < $1 ORDER BY replica_id',
        [now - leaseMs],
      );
      return r.rows.map((x) => x.replica_id);
    },
    async leave(id) {
      await q('DELETE FROM replicas WHERE replica_id = $1', [id]);
      await q('DELETE FROM place_waiters WHERE replica_id = $1', [id]);
    },
  };
}

export function pgLeases(q: Query): PlaceLeases {
  return {
    async tryAcquire(key, id, now, leaseMs, ticket) {
      // The conflicting row is locked while the WHERE is checked: of two replicas taking over one
      // stale lease, the second re-reads the first's fresh row and gets no row back. With a
      // ticket, nothing is inserted while an older message of a live replica waits in the place,
      // and a ticket that wins leaves the queue in the same statement (one round trip, not two).
      const r = await q<{ won: number }>(
        `WITH won AS (
         INSERT INTO place_leases (place_key, holder, acquired_at, renewed_at)
         SELECT $1, $2, $3, $3 FROM ${ASYNC_COMMIT} WHERE $5::text IS NULL OR NOT EXISTS (
           SELECT 1 FROM place_waiters w JOIN replicas rw ON rw.replica_id = w.replica_id
           WHERE w.place_key = $1 AND rw.heartbeat_at >= $4 AND w.ticket <> $5
             AND (w.arrived_at < $6 OR (w.arrived_at = $6 AND w.ticket < $5)))
         ON CONFLICT (place_key) DO UPDATE SET
           holder = excluded.holder, renewed_at = excluded.renewed_at,
           acquired_at = CASE WHEN place_leases.holder = excluded.holder
                              THEN place_leases.acquired_at ELSE excluded.acquired_at END
         WHERE place_leases.holder = excluded.holder
            OR (place_leases.renewed_at < $4
                AND NOT EXISTS (SELECT 1 FROM replicas r
                                WHERE r.replica_id = place_leases.holder AND r.heartbeat_at >= $4))
         RETURNING 1),
         left_line AS (DELETE FROM place_waiters WHERE place_key = $1 AND ticket = $5 AND EXISTS (SELECT 1 FROM won))
         SELECT count(*)::int AS won FROM won`,
        [key, id, now, now - leaseMs, ticket?.id ?? null, ticket?.at ?? 0],
      );
      return (r.rows[0]?.won ?? 0) > 0;
    },
    async join(key, ticket, replicaId) {
      await q(
        `INSERT INTO place_waiters (place_key, ticket, replica_id, arrived_at) SELECT $1, $2, $3, $4 FROM ${ASYNC_COMMIT}
         ON CONFLICT (place_key, ticket) DO NOTHING`,
        [key, ticket.id, replicaId, ticket.at],
      );
    },
    async leave(key, ticketId) {
      await q('DELETE FROM place_waiters WHERE place_key = $1 AND ticket = $2', [key, ticketId]);
    },
    async renew(key, id, now) {
      return changed(
        await q('UPDATE place_leases SET renewed_at = $1 WHERE place_key = $2 AND holder = $3', [now, key, id]),
      );
    },
    async release(key, id, handover) {
      if (handover !== undefined) {
        await q(
          `INSERT INTO place_handover (place_key, replica_id, writes, released_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (place_key) DO UPDATE SET replica_id = excluded.replica_id, writes = excluded.writes,
             released_at = excluded.released_at`,
          [key, id, handover, Date.now()],
        );
      }
      await q('DELETE FROM place_leases WHERE place_key = $1 AND holder = $2', [key, id]);
    },
    async describe(key, id, replyKey, askerId) {
      await q('UPDATE place_leases SET reply_key = $1, asker_id = $2 WHERE place_key = $3 AND holder = $4', [
        replyKey,
        askerId,
        key,
        id,
      ]);
    },
    async findReply(by) {
      const [column, value] = 'replyKey' in by ? ['reply_key', by.replyKey] : ['place_key', by.placeKey];
      const r = await q<LeaseRow>(`SELECT * FROM place_leases WHERE ${column} = $1`, [value]);
      return r.rows[0] === undefined ? undefined : liveLease(r.rows[0]);
    },
    async handover(key) {
      const r = await q<{ replica_id: string; writes: string }>(
        'SELECT replica_id, writes FROM place_handover WHERE place_key = $1',
        [key],
      );
      const row = r.rows[0];
      return row === undefined ? undefined : { replicaId: row.replica_id, handover: row.writes };
    },
    async holder(key) {
      const r = await q<{ holder: string }>('SELECT holder FROM place_leases WHERE place_key = $1', [key]);
      return r.rows[0]?.holder;
    },
  };
}
