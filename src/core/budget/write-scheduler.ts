import {
  type BucketRef,
  type BudgetStore,
  type Clock,
  PlatformRateLimitedError,
  type RateLimitInfo,
  type RateLimitObserver,
  type WriteResult,
} from '../ports.js';

// The scheduler's port: its interface and options (implementation: scheduler.ts), what became of a
// granted write, and the share of a bucket each replica spends.

/**
 * What became of a granted write. Every write's outcome reaches the budgets by this one path
 * (WriteGrant.done), so the scheduler sees headers, 429s and failures in the order they happened
 * and can tell a 429 apart from the writes that were accepted around it.
 */
export type WriteOutcome =
  | { ok: true; rateLimits?: readonly RateLimitInfo[] }
  | {
      ok: false;
      rateLimited: {
        retryAfterMs: number;
        /** The bucket the platform refused (one of the write's); default: the write's first. */
        bucket?: string;
        /** The platform paused every write (Discord global limit): block, learn nothing. */
        global?: boolean;
      };
    }
  /** Failed for another reason (network, refused content): counts as spent, teaches nothing. */
  | { ok: false; error: true }
  /** Never sent (the writer had nothing left to write once granted): the token is given back. */
  | { ok: false; unused: true };

export const unusedOutcome: WriteOutcome = { ok: false, unused: true };

/**
 * What a write's `send` returns when, once granted, it finds nothing to send (the text it would
 * carry was already shown): the grant is given back unused (WriteScheduler.write).
 */
export const NOTHING_SENT: unique symbol = Symbol('nothing sent');

export function okOutcome(result: WriteResult | void): WriteOutcome {
  return result?.rateLimits === undefined ? { ok: true } : { ok: true, rateLimits: result.rateLimits };
}

/** The outcome of a write that threw. */
export function errorOutcome(err: unknown): WriteOutcome {
  if (err instanceof PlatformRateLimitedError) {
    const rateLimited: { retryAfterMs: number; bucket: string; global?: boolean } = {
      retryAfterMs: err.retryAfterMs,
      bucket: err.bucket,
    };
    if (err.global) rateLimited.global = true;
    return { ok: false, rateLimited };
  }
  return { ok: false, error: true };
}

/**
 * Several replicas share one Slack workspace or one Discord bot, and the platform counts their
 * writes together: each spends a share of every bucket, 1 / the live replicas, rebalanced whenever
 * the caller (the heartbeat) sees the count change. The shares add up to the whole bucket, without
 * asking each other per write; the cost: a replica busy while the others idle gets only its share.
 */
export function shareOf(liveReplicas: number): number {
  return 1 / Math.max(1, Math.floor(liveReplicas));
}

/**
 * `notice`: the bridge's own word to a user (a refusal): after every write of a reply, and like
 * an edit it leaves the budget that reserved finals need.
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

/** A replica's last write in a place's per-place bucket, handed to the next replica there. */
export interface PlaceWrite {
  bucket: BucketRef;
  /** Epoch ms. */
  at: number;
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

export interface ScheduledWriteOptions {
  signal?: AbortSignal | undefined;
  /** Whose write this is (see acquire). */
  party?: string | undefined;
  /** Grants tried before a 429 is thrown; default 3. */
  attempts?: number;
}

/** A granted write. `done(outcome)` once the platform answered (default: accepted). */
export interface WriteGrant {
  done(outcome?: WriteOutcome): void;
}

/** What the pump needs: acquire before a write, report its outcome through the grant. */
export interface WriteScheduler extends RateLimitObserver {
  /**
   * `party`: whose write this is (the asking user): waiters of one priority are served round-robin by
   * party. None: a party of its own.
   */
  acquire(
    buckets: readonly BucketRef[],
    priority: WritePriority,
    signal?: AbortSignal,
    party?: string,
  ): Promise<WriteGrant>;
  /**
   * The whole grant handshake: acquire a grant, run `send`, report its outcome. A 429
   * (PlatformRateLimitedError) backs the bucket off and the write goes again on a new grant, at most
   * `attempts` times in all (default 3; then the 429 is thrown); any other error is reported and
   * rethrown; an abort of `signal` while waiting rejects with its reason. `send` may return
   * NOTHING_SENT: the grant is given back unused.
   */
  write<T extends WriteResult | void | typeof NOTHING_SENT>(
    buckets: readonly BucketRef[],
    priority: WritePriority,
    send: () => Promise<T>,
    opts?: ScheduledWriteOptions,
  ): Promise<T>;
  /**
   * A live reply will need one final write in these buckets: intermediate edits leave that much
   * budget free, so finals never wait behind edits. Returns the release (idempotent).
   */
  reserve(buckets: readonly BucketRef[]): () => void;
  /**
   * A reply weighs streaming against posting once (before canAffordFinal): these buckets are
   * brought up to now (refill, growth, a stale probe dropped), and the first one that cannot pay
   * one more final for want of tokens learns that room was wanted (what makes it probe).
   */
  weighFinal(buckets: readonly BucketRef[]): void;
  /**
   * Would one more live reply's final fit, with the finals already reserved, in what these buckets
   * can pay within the final horizon? (A reply that would not can post once when it ends.) A read
   * only: weighFinal first brings the buckets up to now.
   */
  canAffordFinal(buckets: readonly BucketRef[]): boolean;
}

/** The scheduler as one party (a user's reply) uses it: every acquire names that party. */
export function forParty(scheduler: WriteScheduler, party: string): WriteScheduler {
  return {
    acquire: (buckets, priority, signal, who) => scheduler.acquire(buckets, priority, signal, who ?? party),
    write: (buckets, priority, send, opts) =>
      scheduler.write(buckets, priority, send, { ...opts, party: opts?.party ?? party }),
    reserve: (buckets) => scheduler.reserve(buckets),
    weighFinal: (buckets) => scheduler.weighFinal(buckets),
    canAffordFinal: (buckets) => scheduler.canAffordFinal(buckets),
    observe: (info) => scheduler.observe(info),
    limited: (bucket, retryAfterMs) => scheduler.limited(bucket, retryAfterMs),
  };
}
