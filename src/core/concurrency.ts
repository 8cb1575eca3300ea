import type { Release } from './place-queue.js';
import type { Clock } from './ports.js';

// MAX_CONCURRENT_REPLIES: upstream calls in flight at once; the rest wait in FIFO order.

export class Semaphore {
  private active = 0;
  private readonly queue: Array<(release: Release) => void> = [];

  constructor(private readonly max: number) {}

  /** A slot; a waiter is dropped (the promise rejects with the reason) when `signal` aborts. */
  acquire(signal?: AbortSignal): Promise<Release> {
    if (this.active < this.max) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Release>((resolve, reject) => {
      const onAbort = () => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        reject(signal?.reason);
      };
      const waiter = (release: Release) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(release);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  get inUse(): number {
    return this.active;
  }

  get waiting(): number {
    return this.queue.length;
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
