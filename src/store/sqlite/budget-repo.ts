import type Database from 'better-sqlite3';
import type { Lesson } from '../../core/ports.js';
import { budgetColumns, budgetFromRow, type BudgetRow, UPSERT_NEWER } from '../rows.js';

// The scheduler's learned rate-limit budgets (migrations/0003_learned_budgets.sql). A lesson older
// than `maxAgeMs` is dropped when loading: limits change, and relearning one costs a 429 or two.

export interface BudgetRepoOptions {
  /** Forget lessons older than this (default 7 days). */
  maxAgeMs?: number;
  now?: () => number;
}

/** The SQLite statements, synchronous as better-sqlite3 is (the health monitor guards them: store.ts). */
export interface SqliteBudgetRows {
  load(): Lesson[];
  save(b: Lesson): void;
}

export function sqliteBudgetRows(db: Database.Database, opts: BudgetRepoOptions = {}): SqliteBudgetRows {
  const maxAgeMs = opts.maxAgeMs ?? 7 * 24 * 60 * 60_000;
  const now = opts.now ?? Date.now;
  const prune = db.prepare('DELETE FROM learned_budgets WHERE updated_at < ?');
  const all = db.prepare('SELECT * FROM learned_budgets ORDER BY bucket_key');
  const upsert = db.prepare(
    `INSERT INTO learned_budgets (bucket_key, per_minute, burst, limited_at, limited_per_minute, updated_at)
     VALUES (?, ?, ?, ?, ?, ?)
     ${UPSERT_NEWER}`,
  );
  return {
    load() {
      prune.run(now() - maxAgeMs);
      return (all.all() as BudgetRow[]).map(budgetFromRow);
    },
    save(b) {
      upsert.run(...budgetColumns(b));
    },
  };
}
