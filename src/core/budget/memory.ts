import type { BudgetStore, LearnedBudget } from '../ports.js';
import type { BudgetModel } from './model.js';

// What the scheduler learned, kept beyond a bucket's runtime state: in memory (an idle bucket is
// forgotten, its lesson is not) and, when a store is given, in the database, so a restart does not
// relearn its limits by 429s. A bucket is written at most once per `saveEveryMs`; a lesson newer
// than that is written on a later change, when the bucket is forgotten, or at close.

const MAX_ENTRIES = 10_000;

export class LearnedMemory {
  private readonly map = new Map<string, LearnedBudget>();

  constructor(
    private readonly store: BudgetStore | undefined,
    private readonly saveEveryMs: number,
    private readonly onError: (err: unknown) => void,
  ) {
    if (store === undefined) return;
    try {
      for (const b of store.load()) this.remember(b);
    } catch (err) {
      onError(err);
    }
  }

  get(key: string): LearnedBudget | undefined {
    return this.map.get(key);
  }

  /** Record the model's learned numbers if they changed, and save them when due (or forced). */
  save(m: BudgetModel, now: number, force = false): void {
    if (!m.dirty || (!force && now - m.lastSavedAt < this.saveEveryMs)) return;
    const l = m.toLearned(now);
    m.dirty = false;
    m.lastSavedAt = now;
    this.remember(l);
    if (this.store === undefined) return;
    try {
      this.store.save(l);
    } catch (err) {
      // Losing a lesson only costs a 429 after a restart; writes go on.
      this.onError(err);
    }
  }

  private remember(l: LearnedBudget): void {
    this.map.delete(l.key);
    this.map.set(l.key, l);
    if (this.map.size > MAX_ENTRIES) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
  }
}
