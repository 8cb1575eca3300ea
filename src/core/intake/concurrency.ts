import { FairQueue } from './fair-queue.js';
import type { Release } from './place-queue.js';
import type { Clock } from '../ports.js';

// MAX_CONCURRENT_REPLIES: upstream calls in flight at once; the rest wait, served in turn by
// party (the asking user), FIFO within a party: one user's many messages cannot put another
// user's behind all of them.

export class Semaphore {
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

/** Resolves once every promise in `pending` (as it is now) settled, or after `ms`, whichever first. */
export function settledOrTimeout(pending: ReadonlySet<Promise<unknown>>, ms: number, clock: Clock): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = clock.setTimeout(resolve, ms);
    void Promise.allSettled([...pending]).then(() => {
      timer.clear();
      resolve();
    });
  });
}
