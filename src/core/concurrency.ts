import type { Release } from './place-queue.js';

// MAX_CONCURRENT_REPLIES: upstream calls in flight at once; the rest wait in FIFO order.

export class Semaphore {
  private active = 0;
  private readonly queue: Array<(release: Release) => void> = [];

  constructor(private readonly max: number) {}

  acquire(): Promise<Release> {
    if (this.active < this.max) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    return new Promise<Release>((resolve) => this.queue.push(resolve));
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
