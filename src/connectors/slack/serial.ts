// Runs tasks one after another per key: messages of one place reach the relay in the order
// Slack sent them even when one needs a lookup (thread membership, user name) and the next not.

export class SerialByKey {
  private readonly tails = new Map<string, Promise<void>>();

  run(key: string, task: () => Promise<void>): Promise<void> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.then(task, task);
    const tail = next.catch(() => {});
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }

  /** Resolves when every task queued so far has run. */
  async idle(): Promise<void> {
    await Promise.all([...this.tails.values()]);
  }
}
