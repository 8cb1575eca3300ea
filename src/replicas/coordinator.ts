import type { Logger } from 'pino';
import type { Clock, InFlightRecord, Platform } from '../core/ports.js';
import type { AsyncStore } from '../store/ports.js';

// A replica's part in the group: its heartbeat, who else is alive, and the replies of replicas
// that stopped without finishing them. Every REPLICA_LEASE_SECONDS / 3 it renews its heartbeat,
// tells the caller how many replicas are live (the rate-limit budgets are shared between them),
// and claims the open replies of replicas whose heartbeat is older than the lease, so they are
// repaired within the lease and one beat, not only when some replica restarts.

export interface CoordinatorOptions {
  store: Pick<AsyncStore, 'replicas' | 'inflight' | 'backend'>;
  replicaId: string;
  leaseMs: number;
  clock: Clock;
  logger: Logger;
  /** The number of live replicas (this one included) changed. */
  onMembership?(live: number): void;
  /** Each beat, after the heartbeat (e.g. the scheduler's learned-budget sync). */
  onBeat?(): Promise<void>;
  /**
   * The platforms this replica runs: it takes over only their replies, since it can edit no others
   * (with Discord shards on some replicas, another one may run them). Absent: all.
   */
  platforms?: readonly Platform[];
  /** Replies claimed from gone replicas: edit them to say they were interrupted. */
  repair(records: InFlightRecord[]): Promise<void>;
}

export interface Coordinator {
  /** First heartbeat; the replies this replica must repair before it takes messages. */
  start(): Promise<InFlightRecord[]>;
  /** One beat now (the timer calls it; tests call it with a manual clock). */
  beat(): Promise<void>;
  /** Stop beating and leave the group (SIGTERM, after the replies drained). */
  stop(): Promise<void>;
  liveCount(): number;
}

export function createCoordinator(o: CoordinatorOptions): Coordinator {
  const state: BeatState = {
    timer: undefined,
    stopped: false,
    live: 1,
    beating: undefined,
    judgeFrom: 0,
    lastBeatFailed: false,
  };
  return {
    start: () => joinGroup(o, state),
    beat: () => beat(o, state),
    stop: () => leaveGroup(o, state),
    liveCount: () => state.live,
  };
}

/** Where this replica's heartbeat is. */
interface BeatState {
  /** The next beat's timer. */
  timer: { clear(): void } | undefined;
  /** stop() was called: no more beats are scheduled. */
  stopped: boolean;
  /** The live replicas at the last beat, this one included. */
  live: number;
  /** The beat under way, if any. */
  beating: Promise<void> | undefined;
  /**
   * After this replica could not beat (the database was down), no one is taken for gone until
   * this time: every replica's heartbeat is as old as the outage, and the others need a beat of
   * their own (within the lease) before their replies in flight may be claimed and repaired.
   */
  judgeFrom: number;
  lastBeatFailed: boolean;
}

/** First heartbeat; claims the replies this replica must repair, then beats every lease / 3. */
async function joinGroup(o: CoordinatorOptions, state: BeatState): Promise<InFlightRecord[]> {
  const { store, replicaId, leaseMs } = o;
  const now = o.clock.now();
  await store.replicas.heartbeat(replicaId, now);
  state.live = Math.max(1, (await store.replicas.live(now, leaseMs)).length);
  if (state.live > 1) o.onMembership?.(state.live);
  // SQLite is one process: whatever is still open is the last run's. With PostgreSQL, replies
  // of replicas found gone, and this replica's own from before a restart under the same id.
  const open =
    store.backend === 'sqlite'
      ? await store.inflight.listOpen()
      : await store.inflight.listOpenOwnedBy([...(await store.replicas.gone(now, leaseMs)), replicaId]);
  const mine = await claim(o, open);
  schedule(o, state);
  return mine;
}

/** Stop beating and leave the group. */
async function leaveGroup(o: CoordinatorOptions, state: BeatState): Promise<void> {
  state.stopped = true;
  state.timer?.clear();
  await state.beating;
  await o.store.replicas
    .leave(o.replicaId)
    .catch((err: unknown) =>
      o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not leave the replica group'),
    );
}

function schedule(o: CoordinatorOptions, state: BeatState): void {
  if (state.stopped) return;
  state.timer = o.clock.setTimeout(() => {
    void beat(o, state).then(() => schedule(o, state));
  }, o.leaseMs / 3);
}

function beat(o: CoordinatorOptions, state: BeatState): Promise<void> {
  // One beat at a time: a slow database must not stack them up.
  state.beating ??= beatOnce(o, state)
    .catch((err: unknown) => {
      state.lastBeatFailed = true;
      o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'heartbeat failed');
    })
    .finally(() => {
      state.beating = undefined;
    });
  return state.beating;
}

/** The heartbeat, the live count, and (unless just back from a failure) the gone replicas' replies. */
async function beatOnce(o: CoordinatorOptions, state: BeatState): Promise<void> {
  const { store, replicaId, leaseMs, logger } = o;
  const now = o.clock.now();
  await store.replicas.heartbeat(replicaId, now);
  const alive = await store.replicas.live(now, leaseMs);
  const count = Math.max(1, alive.length);
  if (count !== state.live) {
    logger.info({ live: count, replicas: alive }, 'replicas changed');
    state.live = count;
    o.onMembership?.(count);
  }
  if (state.lastBeatFailed) {
    state.lastBeatFailed = false;
    state.judgeFrom = now + leaseMs;
    logger.info('heartbeat back after a failure: no replica is taken for gone for one lease');
  }
  await o.onBeat?.();
  if (now < state.judgeFrom) return;
  await takeOverGone(o, now);
}

/** Claims and repairs the open replies of the replicas whose heartbeat is older than the lease. */
async function takeOverGone(o: CoordinatorOptions, now: number): Promise<void> {
  const { store, leaseMs, logger } = o;
  const gone = await store.replicas.gone(now, leaseMs);
  if (gone.length === 0) return;
  const open = await store.inflight.listOpenOwnedBy(gone);
  const orphans = await claim(o, open);
  if (orphans.length > 0) {
    logger.info({ replies: orphans.length, gone }, 'repairing replies of replicas that stopped');
    await o.repair(orphans);
  }
  // A gone replica is forgotten (its row, its messages in place queues) once nothing of it is left
  // open, so the table does not grow with every restart under a new REPLICA_ID. What it still
  // owns now is what this replica cannot repair (a lost race hands a reply to a live replica).
  const stillOwning = new Set(open.filter((r) => !mine(o, r)).map((r) => r.owner));
  for (const id of gone) if (!stillOwning.has(id)) await store.replicas.leave(id);
}

/** A reply this replica can repair: one of the platforms it runs. */
function mine(o: CoordinatorOptions, rec: InFlightRecord): boolean {
  return o.platforms === undefined || o.platforms.includes(rec.platform);
}

/** Claims `records` for this replica; only the ones it won (another replica may race it). */
async function claim(
  o: CoordinatorOptions,
  records: Array<InFlightRecord & { owner: string }>,
): Promise<InFlightRecord[]> {
  const won: InFlightRecord[] = [];
  for (const rec of records) {
    if (!mine(o, rec)) continue;
    if (rec.owner === o.replicaId || (await o.store.inflight.claim(rec.id, rec.owner, o.replicaId, o.clock.now()))) {
      won.push(rec);
    }
  }
  return won;
}
