import type { Logger } from 'pino';
import type { SharedQueue, SharedTicket, PlaceLease } from '../core/intake/relay.js';
import type { PlaceWrite } from '../core/budget/write-scheduler.js';
import type { Clock } from '../core/ports.js';
import type { PlaceLeases } from '../store/ports.js';

// One place, one answering replica, in arrival order: each admitted message joins the place's
// line in the database, and its replica takes the place's lease only when no older message of a
// live replica waits there (PlaceLeases.tryAcquire with a ticket). The lease is renewed while
// the reply runs, so a replica that dies mid-reply loses it after REPLICA_LEASE_SECONDS and the
// next message in that place is answered by another.

export interface SharedQueueOptions {
  leases: PlaceLeases;
  replicaId: string;
  leaseMs: number;
  clock: Clock;
  logger: Logger;
  /** First wait between attempts; doubles up to maxPollMs. */
  pollMs?: number;
  maxPollMs?: number;
}

/** A place whose give-back failed is given back again after 250 ms, doubling up to 5 s, for about 10 minutes. */
const RELEASE_RETRY_FIRST_MS = 250;
const RELEASE_RETRY_MAX_MS = 5_000;
const RELEASE_RETRIES = 125;

export function createSharedQueue(o: SharedQueueOptions): SharedQueue {
  const locks: Locks = { o, firstPoll: o.pollMs ?? 20, maxPoll: o.maxPollMs ?? 250, unreleased: new Map() };
  return { join: (placeKey, ticket) => joinPlace(locks, placeKey, ticket) };
}

/** What every place's lock shares: the options, the polling waits, and the places not yet given back. */
interface Locks {
  readonly o: SharedQueueOptions;
  readonly firstPoll: number;
  readonly maxPoll: number;
  /**
   * Places whose give-back failed (the database was down): given back again in the background,
   * since a live holder's lease does not run out on its own and the place's next message, at
   * another replica, would wait for it forever. Taking the place again here cancels it.
   */
  readonly unreleased: Map<string, { clear(): void }>;
}

const warn = (o: SharedQueueOptions, what: string) => (err: unknown) =>
  o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, what);

/** Joins the place's queue; the ticket's acquire() waits for the place, leave() gives up the wait. */
function joinPlace(locks: Locks, placeKey: string, ticket: { id: string; at: number }): SharedTicket {
  const { o } = locks;
  const joined = o.leases.join(placeKey, ticket, o.replicaId);
  let done = false;
  const leave = () => {
    if (done) return;
    done = true;
    void joined.then(() => o.leases.leave(placeKey, ticket.id)).catch(warn(o, 'could not leave a place queue'));
  };
  return {
    joined: joined.then(
      () => undefined,
      () => undefined,
    ),
    async acquire(signal: AbortSignal): Promise<PlaceLease> {
      try {
        await joined;
        await waitForLease(locks, placeKey, ticket, signal);
      } catch (err) {
        leave();
        throw err;
      }
      done = true; // tryAcquire took the ticket out of the queue
      return leaseTaken(locks, placeKey);
    },
    leave,
  };
}

/** Tries for the place's lease until this ticket is first in the place's queue, waiting longer each time (up to maxPoll). */
async function waitForLease(
  locks: Locks,
  placeKey: string,
  ticket: { id: string; at: number },
  signal: AbortSignal,
): Promise<void> {
  const { o } = locks;
  for (let wait = locks.firstPoll; ; wait = Math.min(locks.maxPoll, wait * 2)) {
    if (await o.leases.tryAcquire(placeKey, o.replicaId, o.clock.now(), o.leaseMs, ticket)) return;
    await delay(o.clock, wait, signal);
  }
}

/** The place is this replica's: its lease renewed until release(), which hands over the lease's writes. */
async function leaseTaken(locks: Locks, placeKey: string): Promise<PlaceLease> {
  const { o, unreleased } = locks;
  unreleased.get(placeKey)?.clear();
  unreleased.delete(placeKey);
  // Renewed well within the lease, so only a replica that stopped loses it.
  let renewal = o.clock.setTimeout(function renew() {
    void o.leases
      .renew(placeKey, o.replicaId, o.clock.now())
      .then((kept) => {
        if (!kept) o.logger.warn({ placeKey }, 'lost a place lease while answering');
      })
      .catch(warn(o, 'could not renew a place lease'));
    renewal = o.clock.setTimeout(renew, o.leaseMs / 3);
  }, o.leaseMs / 3);
  const last = await o.leases.handover(placeKey).catch((err: unknown) => {
    warn(o, 'could not read a place handover')(err);
    return undefined;
  });
  return {
    handedOver: last !== undefined && last.replicaId !== o.replicaId ? readWrites(last.handover) : undefined,
    async release(writes: PlaceWrite[]) {
      renewal.clear();
      const handover = JSON.stringify(writes);
      try {
        await o.leases.release(placeKey, o.replicaId, handover);
      } catch (err) {
        releaseLater(locks, placeKey, handover);
        throw err;
      }
    },
  };
}

/** Gives the place back again in the background (see Locks.unreleased), backing off, for about 10 minutes. */
function releaseLater(locks: Locks, placeKey: string, handover: string): void {
  const { o, unreleased } = locks;
  unreleased.get(placeKey)?.clear();
  let attempt = 0;
  const again = () => {
    const timer = o.clock.setTimeout(
      () => {
        void o.leases.release(placeKey, o.replicaId, handover).then(
          () => {
            if (unreleased.get(placeKey) === entry) unreleased.delete(placeKey);
            o.logger.info({ placeKey }, 'place given back once the database was back');
          },
          () => {
            if (unreleased.get(placeKey) !== entry) return;
            if (++attempt < RELEASE_RETRIES) again();
            else {
              unreleased.delete(placeKey);
              o.logger.warn({ placeKey }, 'gave up giving a place back; it runs out when this replica stops');
            }
          },
        );
      },
      Math.min(RELEASE_RETRY_MAX_MS, RELEASE_RETRY_FIRST_MS * 2 ** attempt),
    );
    entry.clear = () => timer.clear();
  };
  const entry = { clear: () => {} };
  unreleased.set(placeKey, entry);
  again();
}

/** Waits `ms` on the clock; rejects with the signal's reason once it aborts. */
function delay(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      timer.clear();
      reject(signal.reason as Error);
    };
    const timer = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A handover as stored; whatever does not parse is left out (it only makes writes wait less). */
function readWrites(json: string): PlaceWrite[] | undefined {
  try {
    const v: unknown = JSON.parse(json);
    if (!Array.isArray(v)) return undefined;
    return v.filter(
      (w): w is PlaceWrite =>
        typeof w === 'object' &&
        w !== null &&
        typeof (w as PlaceWrite).at === 'number' &&
        typeof (w as PlaceWrite).bucket?.key === 'string' &&
        typeof (w as PlaceWrite).bucket.limit === 'number' &&
        typeof (w as PlaceWrite).bucket.windowMs === 'number',
    );
  } catch {
    return undefined;
  }
}
