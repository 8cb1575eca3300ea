import type { BudgetStore, Lesson } from '../../core/ports.js';
import { budgetColumns, budgetFromRow, type BudgetRow, UPSERT_NEWER } from '../rows.js';
import type { Query } from './query.js';

// The scheduler's learned rate-limit budgets on PostgreSQL, as sqlite/budget-repo.ts keeps them:
// the replicas share them, and a save never overwrites a newer lesson (rows.ts UPSERT_NEWER).

export function pgBudgets(q: Query): BudgetStore {
  return {
    async load() {
      const r = await q<BudgetRow>('SELECT * FROM learned_budgets ORDER BY bucket_key');
      return r.rows.map(budgetFromRow);
    },
    async save(row: Lesson) {
      await q(
        `INSERT INTO learned_budgets (bucket_key, per_minute, burst, limited_at, limited_per_minute, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ${UPSERT_NEWER}`,
        budgetColumns(row),
      );
    },
  };
}
