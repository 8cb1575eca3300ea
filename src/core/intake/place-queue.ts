// One upstream call at a time per place, in arrival order, with a bounded number waiting.
// enter() is synchronous up to the queueing decision, so the order of handle() calls is the
// order of replies.

export type Release = () => void;

interface Lane {
  waiting: Array<(release: Release) => void>;
}

export class PlaceQueue {
  private readonly lanes = new Map<string, Lane>();
  private waitingCount = 0;

  constructor(private readonly maxWaiting: number) {}

  /** A promise of the place's turn, or undefined when too many already wait there. */
  enter(key: string): Promise<Release> | undefined {
    const lane = this.lanes.get(key);
    if (lane === undefined) {
      this.lanes.set(key, { waiting: [] });
      return Promise.resolve(this.releaser(key));
    }
    if (lane.waiting.length >= this.maxWaiting) return undefined;
    this.waitingCount++;
    return new Promise<Release>((resolve) => lane.waiting.push(resolve));
  }

  /** Messages waiting for their place (not counting the one being answered). */
  get waiting(): number {
    return this.waitingCount;
  }

  private releaser(key: string): Release {
    let released = false;
    return () => {
      if (released) return; // idempotent: a double release must not skip someone
      released = true;
      const lane = this.lanes.get(key);
      const next = lane?.waiting.shift();
      if (next === undefined) {
        this.lanes.delete(key);
        return;
      }
      this.waitingCount--;
      next(this.releaser(key));
    };
  }
}
