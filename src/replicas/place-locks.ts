import type { Logger } from 'pino';
import type { PlaceLocks, PlaceTicket, PlaceTurn } from '../core/intake/relay.js';
import type { PlaceWrite } from '../core/budget/write-scheduler.js';
import type { Clock } from '../core/ports.js';
import type { PlaceLeases } from '../store/ports.js';

// One place, one answering replica, in arrival order: each admitted message joins the place's
// line in the database, and its replica takes the place's lease only when no older message of a
// live replica waits there (PlaceLeases.tryAcquire with a ticket). The lease is renewed while
// the reply runs, so a replica that dies mid-reply loses it after REPLICA_LEASE_SECONDS and the
// next message in that place is answered by another.

export interface PlaceLocksOptions {
  leases: PlaceLeases;
  replicaId: string;
  leaseMs: number;
  clock: Clock;
  logger: Logger;
  /** First wait between attempts; doubles up to maxPollMs. */
  pollMs?: number;
  maxPollMs?: number;
}

export function createPlaceLocks(o: PlaceLocksOptions): PlaceLocks {
  const firstPoll = o.pollMs ?? 20;
  const maxPoll = o.maxPollMs ?? 250;
  const warn = (what: string) => (err: unknown) =>
    o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, what);

  const delay = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason as Error);
        return;
      }
      const onAbort = () => {
        timer.clear();
        reject(signal.reason as Error);
      };
      const timer = o.clock.setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });

  return {
    join(placeKey: string, ticket: { id: string; at: number }): PlaceTicket {
      const joined = o.leases.join(placeKey, ticket, o.replicaId);
      let done = false;
      const leave = () => {
        if (done) return;
        done = true;
        void joined.then(() => o.leases.leave(placeKey, ticket.id)).catch(warn('could not leave a place line'));
      };
      return {
        joined: joined.then(
          () => undefined,
          () => undefined,
        ),
        async acquire(signal: AbortSignal): Promise<PlaceTurn> {
          try {
            await joined;
            for (let wait = firstPoll; ; wait = Math.min(maxPoll, wait * 2)) {
              if (await o.leases.tryAcquire(placeKey, o.replicaId, o.clock.now(), o.leaseMs, ticket)) break;
              await delay(wait, signal);
            }
          } catch (err) {
            leave();
            throw err;
          }
          done = true; // tryAcquire took the ticket out of the line
          // Renewed well within the lease, so only a replica that stopped loses it.
          let renewal = o.clock.setTimeout(function renew() {
            void o.leases
              .renew(placeKey, o.replicaId, o.clock.now())
              .then((kept) => {
                if (!kept) o.logger.warn({ placeKey }, 'lost a place lease while answering');
              })
              .catch(warn('could not renew a place lease'));
            renewal = o.clock.setTimeout(renew, o.leaseMs / 3);
          }, o.leaseMs / 3);
          const last = await o.leases.handover(placeKey).catch((err: unknown) => {
            warn('could not read a place handover')(err);
            return undefined;
          });
          return {
            handedOver: last !== undefined && last.replicaId !== o.replicaId ? readWrites(last.handover) : undefined,
            async release(writes: PlaceWrite[]) {
              renewal.clear();
              await o.leases.release(placeKey, o.replicaId, JSON.stringify(writes));
            },
          };
        },
        leave,
      };
    },
  };
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
