// Gateway messages are handed to the relay in arrival order per place (the channel, thread or DM
// they came from), not globally: a message whose intake waits on Discord (a thread lookup) holds
// back later messages of its own place only. A key's entry goes once its chain has drained, so
// months of traffic in many places leave nothing behind.

export class PlaceOrder {
  private readonly tails = new Map<string, Promise<void>>();

  /**
   * Runs `task` after every earlier task of `key` has settled. `task` should handle its own
   * errors; one that escapes is passed to `onError` and does not stop the key's later tasks.
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

  /** Places with a task queued or running. */
  get size(): number {
    return this.tails.size;
  }
}
