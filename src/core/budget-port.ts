// The scheduler's memory across restarts and replicas: what it learned about each bucket, and the
// store that keeps it.

/** A lesson: what the scheduler learned about one bucket, kept across restarts and replicas (see src/core/budget). */
export interface Lesson {
  /** Bucket key (BucketRef.key). */
  key: string;
  /** Sustained writes per minute. */
  perMinute: number;
  /** Writes allowed at once (token bucket capacity). */
  burst: number;
  /** When the last 429 came (epoch ms), and the rate (per minute) assumed then. */
  limitedAt?: number;
  limitedPerMinute?: number;
  updatedAt: number;
}

/**
 * Keeps learned budgets so a restart does not relearn them by 429s, and so that replicas sharing a
 * database learn from each other (each row is the whole platform's bucket). Implemented in
 * src/store; asynchronous, since PostgreSQL is.
 */
export interface BudgetStore {
  /** Every stored row. */
  load(): Promise<Lesson[]>;
  /** Insert or replace the row of `b.key`, unless the stored row has a newer `updatedAt`. */
  save(b: Lesson): Promise<void>;
}
