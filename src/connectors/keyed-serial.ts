// Runs tasks one after another per key (a place: channel, thread or DM): messages of one place
// reach the relay in the order the platform sent them even when one waits on a lookup (thread
// membership, user name, files) and the next does not; other keys go on meanwhile. A key's entry
// goes once its chain has drained, so months of traffic in many places leave nothing behind.

export class KeyedSerial {
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
