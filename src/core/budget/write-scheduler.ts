import type { BucketRef, BudgetStore, Clock, RateLimitObserver } from '../ports.js';
import type { WriteOutcome } from './outcome.js';

// The scheduler's interface and options (implementation: ../scheduler.ts).

/**
 * `notice`: the bridge's own word to a user (a refusal): after every write of a reply, and like
 * an edit it leaves the budget that held finals need.
 */
export type WritePriority = 'final' | 'first' | 'edit' | 'notice';

export const PRIORITY_RANK: Record<WritePriority, number> = { final: 0, first: 1, edit: 2, notice: 3 };

export interface SchedulerOptions {
  clock: Clock;
  /** Added to every window and block; defaults to max(50 ms, 5% of the window). */
  marginMs?: number;
  /** A bucket with no activity for this long is forgotten (bounded memory). Default 10 min. */
  forgetAfterMs?: number;
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
  /**
   * `party`: whose write this is (the asking user): waiters of one priority are served in turn by
   * party. None: a party of its own.
   */
  acquire(
    buckets: readonly BucketRef[],
    priority: WritePriority,
    signal?: AbortSignal,
    party?: string,
  ): Promise<WriteGrant>;
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

/** The scheduler as one party (a user's reply) uses it: every acquire names that party. */
export function forParty(scheduler: WriteScheduler, party: string): WriteScheduler {
  return {
    acquire: (buckets, priority, signal, who) => scheduler.acquire(buckets, priority, signal, who ?? party),
    hold: (buckets) => scheduler.hold(buckets),
    canAffordFinal: (buckets) => scheduler.canAffordFinal(buckets),
    observe: (info) => scheduler.observe(info),
    limited: (bucket, retryAfterMs) => scheduler.limited(bucket, retryAfterMs),
  };
}
