import { randomUUID } from 'node:crypto';
import type { PlaceWrite } from '../budget/write-scheduler.js';
import { type Arrival, type IncomingMessage, type Place, placeKey } from '../ports.js';

// The order of a place's messages, in one object. A message arrives (the connector saw its
// event, before its own awaits), enters its place (in handle(), synchronously, before the first
// await), is answered when it is first there, and leaves (answered, refused or dropped) so the
// next one goes. "First" means first in this process (one reply at a time per place, a bounded number
// waiting) and, with several replicas, first in the place's shared queue (SharedQueue, joined
// on arrival so a later message at another replica cannot overtake it meanwhile). The drain at
// SIGTERM asks it which messages arrived (and may have been acked) before the drain began.
// Connectors keep their own awaits in the same order with PlaceSerial (below). The upstream slots
// (FairSlots, at the end) are the order after it: whose message calls the upstream next.

export type Release = () => void;

/** A place's queue across the replicas that share the store: who answers there (a lease per place). */
export interface SharedQueue {
  /** An admitted message joins the place's queue, in arrival order, before it waits for the place's lease. */
  join(placeKey: string, ticket: { id: string; at: number }): SharedTicket;
}

export interface SharedTicket {
  /** Settles once the ticket is in the place's queue (or joining failed); never rejects. */
  joined: Promise<void>;
  /**
   * Resolves once no older message waits in the place and this replica has the place's lease;
   * rejects (and leaves the queue) when `signal` aborts first.
   */
  acquire(signal: AbortSignal): Promise<PlaceLease>;
  /** Leave the queue without answering. */
  leave(): void;
}

/** A replica's right to answer in a place across replicas (the place's lease). */
export interface PlaceLease {
  /** Another replica answered in the place last: its last writes in the place's per-place buckets. */
  handedOver: PlaceWrite[] | undefined;
  /** Gives the place back, with this replica's last writes there for the next lease. */
  release(writes: PlaceWrite[]): Promise<void>;
}

/**
 * A message's ticket in its place's queue: its local ticket, in this process (undefined: too many
 * wait there), and its shared ticket, across replicas.
 */
export interface Ticket {
  local: Promise<Release> | undefined;
  shared: SharedTicket | undefined;
  /** A new ticket in the same queue (the first could not be taken: the store was down). */
  rejoin?: () => SharedTicket | undefined;
}

/** What runs once a message is first in its place's queue, and how it ends. */
export interface QueueWork<T> {
  /** The message is first: `handedOver` are the last writes of the replica that answered in the place before. */
  work(handedOver: PlaceWrite[] | undefined): Promise<T>;
  /** Waiting for the lease or the work failed. */
  failed(err: unknown): Promise<T>;
  /**
   * Joining the shared queue failed (the store): `retry` joins again with a new ticket;
   * resolves with the lease once it worked, rejects to give up (then `failed`). Absent: `failed`.
   */
  outage?(err: unknown, retry: () => Promise<PlaceLease>): Promise<PlaceLease>;
  /** This replica's last writes in the place, passed on with the place. */
  lastWrites(): PlaceWrite[];
}

export interface PlaceOrderOptions {
  /** Messages waiting per place besides the one being answered. */
  maxWaitingPerPlace: number;
  /** Several replicas: the place's queue across them (absent: this process is the only one). */
  shared?: SharedQueue | undefined;
  /** The number waiting changed (for the queue-depth gauge). */
  onWaiting?: () => void;
  /** Giving a place back across replicas failed (the lease then runs out on its own). */
  onGiveBackError?: (err: unknown) => void;
}

export class PlaceOrder {
  /** Per place: the resolvers of the messages waiting behind the one answered. */
  private readonly queues = new Map<string, Array<(release: Release) => void>>();
  private waitingLocal = 0;
  /** Arrivals from before the drain began, until their message reaches handle() or is dropped. */
  private readonly early = new WeakMap<Arrival, () => void>();
  private readonly onTheWay = new Set<Promise<void>>();
  /** Tickets joined on arrival, taken up by the message's enter(). */
  private readonly arrived = new WeakMap<Arrival, SharedTicket>();
  private draining = false;

  constructor(private readonly o: PlaceOrderOptions) {}

  /**
   * The event of a message arrived: join the place's queue now. The Arrival goes on as
   * msg.arrival, or is left when the message is dropped; before the drain it is answered even
   * during the drain (it may have been acked), and the drain waits for it to reach handle().
   */
  arrive(place: Place, eventId: string, at: number): Arrival {
    const ticket = this.join(placeKey(place), eventId, at);
    const arrival: Arrival = {
      recorded: ticket?.joined ?? Promise.resolve(),
      leave: () => {
        this.early.get(arrival)?.();
        this.takeTicket(arrival)?.leave();
      },
    };
    if (ticket !== undefined) this.arrived.set(arrival, ticket);
    if (!this.draining) {
      let settle!: () => void;
      const handedOn = new Promise<void>((resolve) => (settle = resolve));
      this.onTheWay.add(handedOn);
      this.early.set(arrival, () => {
        this.onTheWay.delete(handedOn);
        settle();
      });
    }
    return arrival;
  }

  /** handle() got the message of this arrival: the drain no longer waits for it. */
  handed(arrival: Arrival | undefined): void {
    if (arrival !== undefined) this.early.get(arrival)?.();
  }

  /** The message arrived before the drain began. */
  arrivedBeforeDrain(arrival: Arrival | undefined): boolean {
    return arrival !== undefined && this.early.has(arrival);
  }

  /** The drain begins: later arrivals are not admitted. */
  beginDrain(): void {
    this.draining = true;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** Arrivals from before the drain that have not reached handle() (nor been left) yet. */
  get arrivalsOnTheWay(): ReadonlySet<Promise<void>> {
    return this.onTheWay;
  }

  /**
   * The message's ticket, taken synchronously in handle() so replies keep the order of handle()
   * calls: local, and shared (the shared ticket joined on arrival, else a new one: each delivery has
   * its own, a retry of the same event must not take the first delivery's place).
   */
  enter(key: string, eventId: string, at: number, arrival: Arrival | undefined): Ticket {
    const local = this.enterLocal(key);
    const shared = this.takeTicket(arrival) ?? this.join(key, eventId, at);
    return shared === undefined ? { local, shared } : { local, shared, rejoin: () => this.join(key, eventId, at) };
  }

  /** A ticket taken for a message that will not be answered: pass it on when it comes. */
  leave(ticket: Ticket): void {
    ticket.shared?.leave();
    void ticket.local?.then((release) => {
      release();
      this.o.onWaiting?.();
    });
  }

  /**
   * Runs `queued.work` once the message is first in its local queue and in the shared queue; the place goes to
   * the next message once the work ended (and, across replicas, was given back with its last writes).
   * `signal` (the process's shutdown) stops the wait in the shared queue: the work then runs at once and
   * should see the signal.
   */
  whenFirst<T>(ticket: Ticket & { local: Promise<Release> }, signal: AbortSignal, queued: QueueWork<T>): Promise<T> {
    return ticket.local.then(async (release) => {
      this.o.onWaiting?.();
      let lease: PlaceLease | undefined;
      try {
        if (!signal.aborted && ticket.shared !== undefined) {
          lease = await ticket.shared.acquire(signal).catch((err: unknown) => {
            if (signal.aborted) return undefined;
            const rejoin = ticket.rejoin;
            if (queued.outage === undefined || rejoin === undefined) throw err;
            return queued.outage(err, () => {
              const again = rejoin();
              return again === undefined ? Promise.reject(err) : again.acquire(signal);
            });
          });
        }
        return await queued.work(lease?.handedOver);
      } catch (err) {
        return await queued.failed(err);
      } finally {
        if (lease !== undefined)
          await lease.release(queued.lastWrites()).catch((err: unknown) => this.o.onGiveBackError?.(err));
        release();
      }
    });
  }

  /** A local ticket only (a reset): undefined when too many wait there. */
  enterLocal(key: string): Promise<Release> | undefined {
    const queue = this.queues.get(key);
    if (queue === undefined) {
      this.queues.set(key, []);
      return Promise.resolve(this.releaser(key));
    }
    if (queue.length >= this.o.maxWaitingPerPlace) return undefined;
    this.waitingLocal++;
    this.o.onWaiting?.();
    return new Promise<Release>((resolve) => queue.push(resolve));
  }

  /** Messages waiting in this process's place queues (not counting those being answered). */
  get waiting(): number {
    return this.waitingLocal;
  }

  private join(key: string, eventId: string, at: number): SharedTicket | undefined {
    return this.o.shared?.join(key, { id: `${eventId}#${randomUUID()}`, at });
  }

  /** The ticket joined on arrival, taken out (the Arrival's leave() then leaves nothing). */
  private takeTicket(arrival: Arrival | undefined): SharedTicket | undefined {
    const ticket = arrival === undefined ? undefined : this.arrived.get(arrival);
    if (ticket !== undefined && arrival !== undefined) this.arrived.delete(arrival);
    return ticket;
  }

  private releaser(key: string): Release {
    let released = false;
    return () => {
      if (released) return; // idempotent: a double release must not skip someone
      released = true;
      const next = this.queues.get(key)?.shift();
      if (next === undefined) {
        this.queues.delete(key);
        return;
      }
      this.waitingLocal--;
      next(this.releaser(key));
    };
  }
}

/**
 * The connectors' side of the order: tasks run one after another per key (a place: channel,
 * thread or DM), so messages of one place reach the relay in the order the platform sent them
 * even when one waits on a lookup (thread membership, user name, files) and the next does not;
 * other keys go on meanwhile. A key's entry goes once its chain has drained.
 */
export class PlaceSerial {
  private readonly tails = new Map<string, Promise<void>>();

  /**
   * Runs `task` after every earlier task of `key` has settled. `task` should handle its own
   * errors; one that escapes is passed to `onError` and does not stop the key's later tasks.
   * Resolves once `task` (and `onError`, if called) has finished.
   */
  run(key: string, task: () => Promise<void>, onError: (err: unknown) => void): Promise<void> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const tail: Promise<void> = prev
      .then(task)
      .catch(onError)
      .finally(() => {
        if (this.tails.get(key) === tail) this.tails.delete(key);
      });
    this.tails.set(key, tail);
    return tail;
  }

  /** Keys with a task queued or running. */
  get size(): number {
    return this.tails.size;
  }

  /** Resolves when every task queued so far has run. */
  async idle(): Promise<void> {
    await Promise.all([...this.tails.values()]);
  }
}

// MAX_CONCURRENT_REPLIES: upstream calls in flight at once (slots). The rest wait, served round-robin
// by party (the asking user): one waiter of each party in rotation, FIFO within a party, and a
// party that joins goes to the end of the rotation, so however many messages one user queued, a
// newcomer waits for at most one of every party ahead of it.

/** The party a message's writes and waits belong to: its user, on its platform and workspace. */
export function partyOf(msg: Pick<IncomingMessage, 'place' | 'userId'>): string {
  return `${msg.place.platform}:${msg.place.workspaceId ?? ''}:${msg.userId}`;
}

export class FairSlots {
  private active = 0;
  private readonly queue = new FairQueue<(release: Release) => void>();
  private anonymous = 0;

  constructor(private readonly max: number) {}

  /**
   * A slot; a waiter is dropped (the promise rejects with the reason) when `signal` aborts.
   * `party`: whose wait this is (a waiter without one is a party of its own).
   */
  acquire(signal?: AbortSignal, party: string = `\0${this.anonymous++}`): Promise<Release> {
    if (this.active < this.max) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Release>((resolve, reject) => {
      const onAbort = () => {
        this.queue.remove(party, waiter);
        reject(signal?.reason);
      };
      const waiter = (release: Release) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(release);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(party, waiter);
    });
  }

  get inUse(): number {
    return this.active;
  }

  get waiting(): number {
    return this.queue.size;
  }

  /** Waiters of one party. */
  waitingFor(party: string): number {
    return this.queue.sizeOf(party);
  }

  private releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      // The slot passes straight to the next waiter, so `active` stays the same.
      if (next !== undefined) next(this.releaser());
      else this.active--;
    };
  }
}

/** Items served round-robin by party (the slots' waiters; the budget's round-robin tests use it too). */
export class FairQueue<T> {
  /** Parties in rotation order (a Map keeps insertion order); each with its items, oldest first. */
  private readonly parties = new Map<string, T[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Items `party` has waiting. */
  sizeOf(party: string): number {
    return this.parties.get(party)?.length ?? 0;
  }

  push(party: string, item: T): void {
    const items = this.parties.get(party);
    if (items === undefined) this.parties.set(party, [item]);
    else items.push(item);
    this.count++;
  }

  /** The next item in the rotation; its party moves to the end of the rotation. */
  shift(): T | undefined {
    const first = this.parties.entries().next();
    if (first.done === true) return undefined;
    const [party, items] = first.value;
    const item = items.shift() as T;
    this.parties.delete(party);
    if (items.length > 0) this.parties.set(party, items);
    this.count--;
    return item;
  }

  /** Take out an item that no longer waits (its caller gave up); false if it was not queued. */
  remove(party: string, item: T): boolean {
    const items = this.parties.get(party);
    const i = items?.indexOf(item) ?? -1;
    if (items === undefined || i < 0) return false;
    items.splice(i, 1);
    if (items.length === 0) this.parties.delete(party);
    this.count--;
    return true;
  }
}
