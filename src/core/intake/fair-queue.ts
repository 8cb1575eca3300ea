// Waiters served in turn by party (a platform user): one item of each party in rotation, FIFO
// within a party. A party that joins goes to the end of the rotation, so however many items one
// party queued, a newcomer waits for at most one item of every party ahead of it.

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
