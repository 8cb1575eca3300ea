import { sqliteBudgetRows } from './budget-repo.js';
import type {
  ConversationRecord,
  ExpectedUpstreamId,
  FeedbackReply,
  FeedbackVote,
  InFlightBegin,
  InFlightState,
  Lesson,
  Place,
  Platform,
} from '../../core/ports.js';
import type Database from 'better-sqlite3';
import {
  type AsyncStore,
  BUDGET_KEEP_MS,
  HANDOVER_KEEP_MS,
  type InstallationKey,
  type PendingLimit,
  type PlaceLeases,
  type ReplicaRegistry,
  type Ticket,
} from '../ports.js';
import { type LeaseRow, liveLease } from '../rows.js';
import { type HealthMonitor, type StoreHealth, StoreUnavailableError } from '../health.js';
import { createConversationRepo } from './conversation-repo.js';
import { createEventRepo } from './event-repo.js';
import { createFeedbackRepo } from './feedback-repo.js';
import { classifyStoreError } from './health.js';
import { createInFlightRepo } from './inflight-repo.js';
import { createInstallationRepo } from './installation-repo.js';
import { currentVersion } from './migrate.js';
import { createOAuthStateRepo } from './oauth-state-repo.js';

// The store port over the better-sqlite3 database: the repositories, and statements of its
// own for what several replicas need (migration 0004), each call guarded once (see guard).
// better-sqlite3 is synchronous and this process holds the only connection that writes, so every
// operation is atomic already; the compare-and-set ones still run in IMMEDIATE transactions so two
// processes on one file (a `migrate` next to a running bridge) cannot interleave them.

/**
 * Runs a SQLite call as a promise. A storage failure is reported to the store's one health monitor
 * and becomes a StoreUnavailableError; while the store is unhealthy a `write` fails at once without
 * touching SQLite, so a held lock costs the event loop one busy timeout per probe, not one per message.
 */
function guard<A extends unknown[], R>(
  monitor: HealthMonitor,
  fn: (...args: A) => R,
  write = false,
): (...args: A) => Promise<R> {
  return async (...args: A): Promise<R> => {
    if (write) {
      const h = monitor.health();
      if (!h.ok) throw new StoreUnavailableError(h.kind ?? 'io', h.reason ?? 'database unavailable');
    }
    try {
      return fn(...args);
    } catch (err) {
      // A closed store's monitor no longer records failures; the error is still a storage one.
      const bad = monitor.report(err) ?? classifyStoreError(err);
      if (!bad) throw err;
      throw new StoreUnavailableError(bad.kind, bad.reason, { cause: err });
    }
  };
}

/**
 * The store on SQLite: the asynchronous port the bridge uses, plus the database itself for what
 * only SQLite has (doctor's pragmas, tests that read the tables).
 */
export interface SqliteStore extends AsyncStore {
  readonly backend: 'sqlite';
  readonly db: Database.Database;
}

export interface SqliteStoreParts {
  db: Database.Database;
  path: string;
  /** The store's one health monitor: the probe and every call below report to it. */
  monitor: HealthMonitor;
  /** SQLite's probe (health.ts sqliteProbe): synchronous, as better-sqlite3 is. */
  check: () => StoreHealth;
}

/** The store port over an open, migrated database (index.ts openStore opens it). */
export function createSqliteStore(parts: SqliteStoreParts): SqliteStore {
  const { db, path, monitor, check } = parts;
  const g = <A extends unknown[], R>(fn: (...args: A) => R) => guard(monitor, fn);
  /** A write: fails at once while the store is unhealthy. */
  const w = <A extends unknown[], R>(fn: (...args: A) => R) => guard(monitor, fn, true);
  const conversations = createConversationRepo(db);
  const events = createEventRepo(db);
  const inflight = createInFlightRepo(db);
  const feedback = createFeedbackRepo(db);
  const installations = createInstallationRepo(db);
  const oauthStates = createOAuthStateRepo(db);

  // ---- replicas and leases ----
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
    (key: string, holder: string, now: number, leaseMs: number, ticket: Ticket | undefined): boolean => {
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

  // ---- budgets ----
  // The scheduler's own repository: one table layout, one mapping.
  const budgetRows = sqliteBudgetRows(db);

  const replicas: ReplicaRegistry = {
    heartbeat: g((id: string, at: number) => {
      heartbeat.run(id, at, at);
    }),
    live: g((now: number, leaseMs: number) => live.all(now - leaseMs).map((r) => r.replica_id)),
    gone: g((now: number, leaseMs: number) => gone.all(now - leaseMs).map((r) => r.replica_id)),
    leave: g((id: string) => {
      forget.run(id);
      forgetWaiters.run(id);
    }),
  };
  const pruneHandovers = db.prepare('DELETE FROM place_handover WHERE released_at < ?');
  const pruneBudgets = db.prepare('DELETE FROM learned_budgets WHERE updated_at < ?');
  const leases: PlaceLeases = {
    tryAcquire: g((key: string, replicaId: string, now: number, leaseMs: number, ticket?: Ticket) =>
      acquireInLine.immediate(key, replicaId, now, leaseMs, ticket),
    ),
    join: g((key: string, ticket: Ticket, replicaId: string) => {
      join.run(key, ticket.id, replicaId, ticket.at);
    }),
    leave: g((key: string, ticketId: string) => {
      leaveLine.run(key, ticketId);
    }),
    renew: g((key: string, replicaId: string, now: number) => renew.run(now, key, replicaId).changes === 1),
    release: g((key: string, replicaId: string, handover?: string) => {
      if (handover !== undefined) leaveHandover.run(key, replicaId, handover, Date.now());
      release.run(key, replicaId);
    }),
    describe: g((key: string, replicaId: string, replyKey: string, askerId: string) => {
      describeLease.run(replyKey, askerId, key, replicaId);
    }),
    findReply: g((by: { replyKey: string } | { placeKey: string }) => {
      const row = 'replyKey' in by ? leaseByReply.get(by.replyKey) : leaseByPlace.get(by.placeKey);
      return row === undefined ? undefined : liveLease(row);
    }),
    handover: g((key: string) => {
      const row = readHandover.get(key);
      return row === undefined ? undefined : { replicaId: row.replica_id, handover: row.writes };
    }),
    holder: g((key: string) => holder.get(key)?.holder),
  };

  return {
    backend: 'sqlite',
    location: path,
    db,
    conversations: {
      get: g((place: Place) => conversations.get(place)),
      put: w((rec: ConversationRecord) => conversations.put(rec)),
      touch: w((place: Place, at: number) => conversations.touch(place, at)),
      delete: w((place: Place) => conversations.delete(place)),
      prune: w((before: number) => conversations.prune(before)),
      replaceIfUnchanged: g((place: Place, expected: ExpectedUpstreamId, next: ConversationRecord) =>
        conversations.replaceIfUnchanged(place, expected, next),
      ),
    },
    events: {
      markSeen: w((platform: Platform, eventId: string, at: number) => events.markSeen(platform, eventId, at)),
      wasSeen: g((platform: Platform, eventId: string) => events.wasSeen(platform, eventId)),
      prune: w((before: number) => events.prune(before)),
    },
    inflight: {
      begin: w((rec: InFlightBegin & { owner: string }) => inflight.begin(rec)),
      progress: w((id: number, messageIds: string[], lastText: string, at: number) =>
        inflight.progress(id, messageIds, lastText, at),
      ),
      setUpstreamId: w((id: number, upstreamId: string) => inflight.setUpstreamId(id, upstreamId)),
      finish: w((id: number, state: Exclude<InFlightState, 'streaming'>, at: number) => inflight.finish(id, state, at)),
      listOpen: g((platform?: Platform) => inflight.listOpen(platform)),
      listOpenOwnedBy: g((owners: readonly string[]) => inflight.listOpenOwnedBy(owners)),
      claim: g((id: number, from: string, to: string, at: number) => inflight.claim(id, from, to, at)),
      prune: w((before: number) => inflight.prune(before)),
    },
    installations: {
      save: w((key: InstallationKey, userId: string | undefined, json: string, at: number) =>
        installations.save(key, userId, json, at),
      ),
      find: g((key: InstallationKey) => installations.find(key)),
      delete: w((key: InstallationKey) => installations.delete(key)),
      count: g(() => installations.count()),
    },
    replicas,
    leases,
    feedback: {
      rememberReply: w((r: FeedbackReply) => feedback.rememberReply(r)),
      reply: g((replyKey: string) => feedback.reply(replyKey)),
      vote: w((v: Omit<FeedbackVote, 'deliveredAt'>) => feedback.vote(v)),
      pending: g((upstreamId: string, userId: string) => feedback.pending(upstreamId, userId)),
      delivered: w((votes: { replyKey: string; userId: string }[], at: number) => feedback.delivered(votes, at)),
      forConversation: g((upstreamId: string) => feedback.forConversation(upstreamId)),
      prune: w((before: number) => feedback.prune(before)),
      pruneVotes: w((before: number) => feedback.pruneVotes(before)),
    },
    oauthStates: {
      issue: g((state: string, expiresAt: number, limit?: PendingLimit) => oauthStates.issue(state, expiresAt, limit)),
      consume: g((state: string, now: number) => oauthStates.consume(state, now)),
      prune: g((before: number) => oauthStates.prune(before)),
    },
    budgets: {
      load: g(() => budgetRows.load()),
      save: g((row: Lesson) => budgetRows.save(row)),
    },
    housekeeping: w((now: number) => ({
      handovers: pruneHandovers.run(now - HANDOVER_KEEP_MS).changes,
      budgets: pruneBudgets.run(now - BUDGET_KEEP_MS).changes,
    })),
    schemaVersion: g(() => currentVersion(db)),
    isOpen: () => db.open,
    health: () => monitor.health(),
    probe: async () => monitor.record(check()),
    onHealthChange: (listener) => monitor.onChange(listener),
    close: async () => {
      monitor.stop();
      if (db.open) db.close();
    },
  };
}
