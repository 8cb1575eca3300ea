import type { IncomingMessage } from '../ports.js';
import type { Release } from './place-order.js';

// MAX_CONCURRENT_REPLIES: upstream calls in flight at once (slots). The rest wait, served in turn
// by party (the asking user): one waiter of each party in rotation, FIFO within a party, and a
// party that joins goes to the end of the rotation, so however many messages one user queued, a
// newcomer waits for at most one of every party ahead of it.

/** The party a message's writes and turns belong to: its user, on its platform and workspace. */
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
   * `party`: whose turn this is (a waiter without one is a party of its own).
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

/** Items served in turn by party (the slots' waiters; the budget's fair-turn tests use it too). */
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

  /** The next item in turn; its party moves to the end of the rotation. */
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
