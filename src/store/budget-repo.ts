import type Database from 'better-sqlite3';
import type { BudgetStore, LearnedBudget } from '../core/ports.js';

// The scheduler's learned rate-limit budgets (migrations/0003_learned_budgets.sql). A lesson older
// than `maxAgeMs` is dropped when loading: limits change, and relearning one costs a 429 or two.

export interface BudgetRow {
  bucket_key: string;
  per_minute: number;
  burst: number;
  limited_at: number | null;
  limited_per_minute: number | null;
  updated_at: number;
}

export interface BudgetRepoOptions {
  /** Forget lessons older than this (default 7 days). */
  maxAgeMs?: number;
  now?: () => number;
}

/** A `learned_budgets` row as the scheduler reads it (SQLite and PostgreSQL keep one layout). */
export function budgetFromRow(r: BudgetRow): LearnedBudget {
  const b: LearnedBudget = { key: r.bucket_key, perMinute: r.per_minute, burst: r.burst, updatedAt: r.updated_at };
  if (r.limited_at !== null) b.limitedAt = r.limited_at;
  if (r.limited_per_minute !== null) b.limitedPerMinute = r.limited_per_minute;
  return b;
}

/** The row's columns in table order: bucket_key, per_minute, burst, limited_at, limited_per_minute, updated_at. */
export function budgetColumns(b: LearnedBudget): [string, number, number, number | null, number | null, number] {
  return [b.key, b.perMinute, b.burst, b.limitedAt ?? null, b.limitedPerMinute ?? null, b.updatedAt];
}

/**
 * The upsert both backends run: a row replaces the stored one unless that one is newer. Replicas
 * save without waiting for each other, so saves can land out of order; the newer lesson must win.
 */
export const UPSERT_NEWER = `ON CONFLICT (bucket_key) DO UPDATE SET per_minute = excluded.per_minute, burst = excluded.burst,
       limited_at = excluded.limited_at, limited_per_minute = excluded.limited_per_minute,
       updated_at = excluded.updated_at
     WHERE learned_budgets.updated_at <= excluded.updated_at`;

/** The SQLite statements, synchronous as better-sqlite3 is (sqlite-async.ts guards them). */
export interface SqliteBudgetRows {
  load(): LearnedBudget[];
  save(b: LearnedBudget): void;
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

/** The core's BudgetStore port over SQLite (one process: each call is done when it returns). */
export function createBudgetRepo(db: Database.Database, opts: BudgetRepoOptions = {}): BudgetStore {
  const rows = sqliteBudgetRows(db, opts);
  return {
    load: async () => rows.load(),
    save: async (b) => rows.save(b),
  };
}
