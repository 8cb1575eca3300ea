import type { BudgetStore, Lesson } from '../../src/core/ports.js';

// Learned budgets in memory (the core's BudgetStore), with the database's merge rule: a row
// replaces the stored one unless that one is newer. One instance shared by several schedulers is
// a database shared by several replicas. `fail` makes every call reject (a database that is down).

export class MemoryBudgetStore implements BudgetStore {
  readonly rows = new Map<string, Lesson>();
  saves = 0;
  loads = 0;
  fail: Error | undefined;

  async load(): Promise<Lesson[]> {
    this.loads++;
    if (this.fail) throw this.fail;
    return [...this.rows.values()].map((r) => ({ ...r }));
  }

  async save(b: Lesson): Promise<void> {
    this.saves++;
    if (this.fail) throw this.fail;
    const old = this.rows.get(b.key);
    if (old === undefined || old.updatedAt <= b.updatedAt) this.rows.set(b.key, { ...b });
  }
}
