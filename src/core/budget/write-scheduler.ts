import type { BucketRef, BudgetStore, Clock, RateLimitObserver } from '../ports.js';
import type { WriteOutcome } from './outcome.js';

// The scheduler's interface and options (implementation: ../scheduler.ts).

export type WritePriority = 'final' | 'first' | 'edit';

export const PRIORITY_RANK: Record<WritePriority, number> = { final: 0, first: 1, edit: 2 };

export interface SchedulerOptions {
  clock: Clock;
  /** Added to every window and block; defaults to max(50 ms, 5% of the window). */
  marginMs?: number;
  /** A bucket with no activity for this long is forgotten (bounded memory). Default 10 min. */
  forgetAfterMs?: number;
  /**
   * A held final must be payable within this long (tokens now plus what refills meanwhile):
   * edits leave that much, and canAffordFinal asks it. Default 2 s.
   */
  finalHorizonMs?: number;
  /** Where learned budgets are kept across restarts, and shared between replicas. */
  store?: BudgetStore;
  /** A bucket's learned budget is written at most this often. Default 5 s. */
  saveEveryMs?: number;
  /** A store that failed (the lesson is kept in memory). */
  onStoreError?: (err: unknown) => void;
  /** Told the share at construction and at each change (metrics, discord.js's own limiter). */
  onShareChange?: (share: number) => void;
}

/**
 * A bucket as the scheduler models it: `perMinute` and `burst` are the whole platform's bucket as
 * learned; `mine` is this replica's share of it.
 */
export interface BudgetView {
  perMinute: number;
  burst: number;
  mine: { perMinute: number; burst: number };
  blockedUntil: number;
  learned: boolean;
}

/** A granted write. `done(outcome)` once the platform answered (default: accepted). */
export interface WriteGrant {
  done(outcome?: WriteOutcome): void;
}

/** What the pump needs: acquire before a write, report its outcome through the grant. */
export interface WriteScheduler extends RateLimitObserver {
  acquire(buckets: readonly BucketRef[], priority: WritePriority, signal?: AbortSignal): Promise<WriteGrant>;
  /**
   * A live reply will need one final write in these buckets: intermediate edits leave that much
   * budget free, so finals never wait behind edits. Returns the release (idempotent).
   */
  hold(buckets: readonly BucketRef[]): () => void;
  /**
   * Would one more live reply's final fit, with the finals already held, in what these buckets
   * can pay within the final horizon? (A reply that would not can post once when it ends.)
   */
  canAffordFinal(buckets: readonly BucketRef[]): boolean;
}
