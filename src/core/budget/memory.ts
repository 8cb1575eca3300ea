import type { BudgetStore, LearnedBudget } from '../ports.js';
import type { BudgetModel } from './model.js';

// What the scheduler learned, kept beyond a bucket's runtime state: in memory (an idle bucket is
// forgotten, its lesson is not) and, when a store is given, in the database, so a restart does not
// relearn its limits by 429s, and so that replicas sharing the database learn from each other.
//
// A stored row is the whole platform's bucket as learned (each replica applies its share to it),
// dated by when the lesson was learned. Merge rule, in memory as in the database: the newer
// `updatedAt` wins. A bucket is written at most once per `saveEveryMs`; a lesson newer than that is
// written on a later change, when the bucket is forgotten, or at close; a 429 at once. Saves are
// fire-and-forget: a failure is reported (onError) and the lesson stays in memory.

const MAX_ENTRIES = 10_000;

export class LearnedMemory {
  private readonly map = new Map<string, LearnedBudget>();
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly store: BudgetStore | undefined,
    private readonly saveEveryMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  get(key: string): LearnedBudget | undefined {
    return this.map.get(key);
  }

  /**
   * Read the stored lessons and merge them (newer wins): into memory, and into the live models
   * `live` gives for a row's key (a family's key gives every member). Returns how many live models
   * took a row's numbers. A failed read is reported and changes nothing.
   */
  async load(live: (key: string) => Iterable<BudgetModel>, now: () => number): Promise<number> {
    if (this.store === undefined) return 0;
    let rows: LearnedBudget[];
    try {
      rows = await this.store.load();
    } catch (err) {
      this.onError(err);
      return 0;
    }
    const at = now();
    let applied = 0;
    for (const row of rows) {
      const known = this.map.get(row.key);
      if (known === undefined || known.updatedAt < row.updatedAt) this.remember(row);
      for (const m of live(row.key)) {
        if (m.learnedAt >= row.updatedAt) continue;
        m.applyLearned(row, at);
        applied++;
      }
    }
    return applied;
  }

  /**
   * Record the model's learned numbers if they changed, and save them when due (or forced).
   * Returns the lesson recorded, if one was.
   */
  save(m: BudgetModel, now: number, force = false): LearnedBudget | undefined {
    if (!m.dirty || (!force && now - m.lastSavedAt < this.saveEveryMs)) return undefined;
    const l = m.toLearned(now);
    m.dirty = false;
    m.lastSavedAt = now;
    this.remember(l);
    if (this.store === undefined) return l;
    let p: Promise<void>;
    try {
      p = this.store.save(l);
    } catch (err) {
      this.onError(err); // a store that throws rather than rejects
      return l;
    }
    // Losing a lesson only costs a 429 after a restart (or on another replica); writes go on.
    const tracked = p.catch((err: unknown) => this.onError(err)).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
    return l;
  }

  /** Resolves when every save started so far has ended (before the database closes). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
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
