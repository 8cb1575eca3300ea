import { BucketTable } from './bucket-table.js';
import { FairOrder, insertByRank } from './fair-order.js';
import { type BudgetModel, MINUTE } from './model.js';
import type { WriteOutcome } from './outcome.js';
import {
  type BudgetView,
  PRIORITY_RANK,
  type SchedulerOptions,
  type WriteGrant,
  type WritePriority,
  type WriteScheduler,
} from './write-scheduler.js';
import type { BucketRef, Clock, RateLimitInfo } from '../ports.js';

export { errorOutcome, okOutcome, unusedOutcome, type WriteOutcome } from './outcome.js';
export { shareOf } from './share.js';
export type { BudgetView, SchedulerOptions, WriteGrant, WritePriority, WriteScheduler } from './write-scheduler.js';

const EDIT_RANK = PRIORITY_RANK.edit;
/**
 * A held final must be payable within this long (tokens now plus what refills meanwhile): edits
 * leave that much, and canAffordFinal asks it.
 */
const FINAL_HORIZON_MS = 2000;

/** A replica's last write in a place's per-place bucket, handed to the next replica there. */
export interface PlaceWrite {
  bucket: BucketRef;
  /** Epoch ms. */
  at: number;
}

// One rate-limit scheduler for every platform write of every reply.
//
// Each bucket is a learned token bucket (budget/model.ts): the connector's limit per window is a
// first guess, 429s shrink it, quiet pressure grows it back, headers replace it. A 429 is the
// bucket's that the platform names (the first the write counts in, if it names none), whatever
// channel the write went to. Every write's outcome comes back through its grant's done():
// accepted (with headers), refused (429) or failed.
//
// Waiters are served by priority (final > first > edit > notice), and within a priority in turn by
// party, the user whose reply it is (budget/fair-order.ts), FIFO within a party: one user's many
// replies cannot put another user's behind all of them. Live replies hold their final's budget,
// so intermediate edits and notices never spend what the finals need.
//
// Several replicas: each spends `share` of every bucket (setShare, budget/share.ts), and what one
// learns reaches the others through the store (sync, budget/memory.ts).

interface Waiter {
  seq: number;
  rank: number;
  party: string | undefined;
  buckets: readonly BucketRef[];
  resolve: (grant: WriteGrant) => void;
  reject: (err: unknown) => void;
  cleanup: () => void;
}

export class RateLimitScheduler implements WriteScheduler {
  private readonly clock: Clock;
  private readonly buckets: BucketTable;
  /** Sorted by (rank, seq). */
  private waiters: Waiter[] = [];
  private readonly fair = new FairOrder();
  private seq = 0;
  private timer: { clear(): void; at: number } | undefined;
  private readonly onShareChange: (share: number) => void;

  constructor(opts: SchedulerOptions) {
    this.clock = opts.clock;
    this.buckets = new BucketTable({
      marginMs: opts.marginMs,
      forgetAfterMs: opts.forgetAfterMs ?? 10 * MINUTE,
      store: opts.store,
      saveEveryMs: opts.saveEveryMs ?? 5000,
      onStoreError: opts.onStoreError ?? (() => {}),
    });
    this.onShareChange = opts.onShareChange ?? (() => {});
    this.onShareChange(this.buckets.share);
  }

  /** This replica's share of every bucket (1: it is alone). */
  get share(): number {
    return this.buckets.share;
  }

  /**
   * From now on spend `fraction` (0 < f ≤ 1) of every bucket: its sustained rate and burst, the
   * `remaining` counts of headers. The caller sets 1 / the live
   * replicas whenever that count changes (shareOf).
   */
  setShare(fraction: number): void {
    if (!this.buckets.setShare(fraction, this.clock.now())) return;
    this.onShareChange(fraction);
    this.serve();
  }

  /** Read the stored lessons; awaited at start, before the first write. */
  async restore(): Promise<void> {
    await this.sync();
  }

  /**
   * Merge what other replicas learned (the stored row with the newer updatedAt wins). The caller
   * runs it periodically (each heartbeat). A failed read is reported through onStoreError.
   */
  async sync(): Promise<void> {
    if ((await this.buckets.sync(() => this.clock.now())) > 0) this.serve();
  }

  /** Resolves when the lessons saved so far are written (after close, before the store closes). */
  flush(): Promise<void> {
    return this.buckets.flush();
  }

  acquire(
    buckets: readonly BucketRef[],
    priority: WritePriority,
    signal?: AbortSignal,
    party?: string,
  ): Promise<WriteGrant> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const now = this.clock.now();
    this.sweep(now);
    const states = buckets.map((b) => this.buckets.state(b, now));
    const rank = PRIORITY_RANK[priority];
    // Fast path without a timer hop: nobody queued for these buckets and all have budget.
    if (
      !this.waiters.some((w) => sharesBucket(w.buckets, buckets)) &&
      states.every((s) => s.readyAt(now, rank >= EDIT_RANK, FINAL_HORIZON_MS) <= now)
    ) {
      this.fair.served(party, now);
      return Promise.resolve(this.grantAll(states, now));
    }
    return new Promise<WriteGrant>((resolve, reject) => {
      const waiter: Waiter = { seq: this.seq++, rank, party, buckets, resolve, reject, cleanup: () => {} };
      if (signal !== undefined) {
        const onAbort = () => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(signal.reason);
          this.serve();
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiter.cleanup = () => signal.removeEventListener('abort', onAbort);
      }
      insertByRank(this.waiters, waiter);
      this.serve();
    });
  }

  /** Out-of-band headers (an SDK's response event): as if they came with a write's answer. */
  observe(info: RateLimitInfo): void {
    const s = this.buckets.get(info.bucket);
    if (s === undefined) return; // a bucket we never wrote to: nothing to correct
    // Out of band (an SDK's response event): the write these headers answer is usually one of
    // ours still in flight, already counted by the platform.
    s.observe(info, this.clock.now(), 1);
    this.serve();
  }

  /**
   * An out-of-band 429 (a call that was no granted write): the bucket is blocked and paced after,
   * but learns nothing, since the write it refused was not ours to count.
   */
  limited(bucket: string, retryAfterMs: number): void {
    const now = this.clock.now();
    this.buckets.limited(bucket, retryAfterMs, now);
    this.serve();
  }

  hold(buckets: readonly BucketRef[]): () => void {
    const now = this.clock.now();
    const states = buckets.map((b) => this.buckets.state(b, now));
    for (const s of states) s.held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const s of states) s.held = Math.max(0, s.held - 1);
      this.serve();
    };
  }

  /**
   * The last writes this replica made in a place's per-place buckets (BucketRef.perPlace), to hand
   * the place over to the replica that answers there next.
   */
  placeWrites(buckets: readonly BucketRef[]): PlaceWrite[] {
    const writes: PlaceWrite[] = [];
    for (const bucket of buckets) {
      if (bucket.perPlace !== true) continue;
      const at = this.buckets.lastGrantAt(bucket.key);
      if (at !== undefined) writes.push({ bucket, at });
    }
    return writes;
  }

  /** Another replica answered in a place last: its writes there count in this replica's buckets. */
  handOver(writes: readonly PlaceWrite[]): void {
    const now = this.clock.now();
    for (const w of writes) {
      if (w.bucket.perPlace !== true) continue;
      this.buckets.state(w.bucket, now).spentAt(w.at, now);
    }
    this.serve();
  }

  canAffordFinal(buckets: readonly BucketRef[]): boolean {
    const now = this.clock.now();
    return buckets.every((b) => this.buckets.state(b, now).affords(now, FINAL_HORIZON_MS, 1));
  }

  /** Numbers for tests and metrics. */
  stats(): { buckets: number; waiting: number } {
    return { buckets: this.buckets.size, waiting: this.waiters.length };
  }

  /**
   * A bucket's current model, for tests and metrics; undefined if not known. `perMinute` and
   * `burst` are the whole platform's bucket as learned; `mine` is this replica's share of it.
   */
  budget(key: string): BudgetView | undefined {
    return this.buckets.view(key);
  }

  /** Reject every waiter, stop the timer and save what was learned (shutdown). */
  close(reason: unknown = new Error('scheduler closed')): void {
    this.timer?.clear();
    this.timer = undefined;
    this.buckets.saveAll(this.clock.now());
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) {
      w.cleanup();
      w.reject(reason);
    }
  }

  /** Grant a write in every bucket; its done() reports what the platform said. */
  private grantAll(states: readonly BudgetModel[], at: number): WriteGrant {
    for (const s of states) s.grant(at);
    let settled = false;
    return {
      done: (outcome: WriteOutcome = { ok: true }) => {
        if (settled) return;
        settled = true;
        const now = this.clock.now();
        for (const s of states) s.settle();
        if (outcome.ok) this.accepted(states, outcome.rateLimits ?? [], now);
        else if ('rateLimited' in outcome) this.refused(states, at, outcome.rateLimited, now);
        else if ('unused' in outcome) for (const s of states) s.refund();
        // A write that failed otherwise may have counted: its token stays spent. A 429 just
        // learned is saved at once, for the other replicas' next sync.
        for (const s of states) this.buckets.save(s, now, s.lastLimitedAt === now);
        this.serve();
      },
    };
  }

  private accepted(states: readonly BudgetModel[], rateLimits: readonly RateLimitInfo[], now: number): void {
    for (const s of states) s.accept(now);
    for (const info of rateLimits) this.buckets.get(info.bucket)?.observe(info, now);
  }

  private refused(
    states: readonly BudgetModel[],
    grantedAt: number,
    rl: { retryAfterMs: number; bucket?: string; global?: boolean },
    now: number,
  ): void {
    // The refused write was not spent anywhere.
    for (const s of states) s.refund();
    if (rl.global) {
      // The platform paused everything for a moment: block, but no bucket of ours is to blame.
      for (const s of states) s.block(now, rl.retryAfterMs);
      return;
    }
    const target = rl.bucket === undefined ? states[0] : states.find((s) => s.key === rl.bucket);
    if (target === undefined) {
      this.buckets.limited(rl.bucket as string, rl.retryAfterMs, now);
      return;
    }
    target.learn(now, grantedAt);
    target.block(now, rl.retryAfterMs);
  }

  /**
   * Grant every waiter that can go, in priority order and in turn by party. A waiter that cannot
   * go reserves its buckets, so a later waiter cannot take the budget it is waiting for.
   */
  private serve(): void {
    const now = this.clock.now();
    const reserved = new Set<string>();
    let nextAt = Number.POSITIVE_INFINITY;
    const granted = new Map<Waiter, WriteGrant>();
    for (const w of this.fair.order(this.waiters)) {
      if (w.buckets.some((b) => reserved.has(b.key))) continue;
      const states = w.buckets.map((b) => this.buckets.state(b, now));
      const ready = states.map((s) => s.readyAt(now, w.rank >= EDIT_RANK, FINAL_HORIZON_MS));
      const at = Math.max(0, ...ready);
      if (at <= now) {
        this.fair.served(w.party, now);
        granted.set(w, this.grantAll(states, now));
      } else {
        for (const b of w.buckets) reserved.add(b.key);
        nextAt = Math.min(nextAt, at);
      }
    }
    if (granted.size > 0) this.waiters = this.waiters.filter((w) => !granted.has(w));
    this.noteWaitingPosts(now);
    this.arm(nextAt, now);
    for (const [w, grant] of granted) {
      w.cleanup();
      w.resolve(grant);
    }
  }

  /**
   * Posts (not edits) left waiting, counted per bucket: several at once in one bucket is demand for
   * a burst (LearnedNumbers.postsWaited). One alone is a place's next reply after its last, which
   * a larger burst would not serve.
   */
  private noteWaitingPosts(now: number): void {
    const counts = new Map<string, number>();
    for (const w of this.waiters) {
      if (w.rank >= EDIT_RANK) continue;
      for (const b of w.buckets) counts.set(b.key, (counts.get(b.key) ?? 0) + 1);
    }
    for (const [key, n] of counts) if (n >= 2) this.buckets.get(key)?.postsWaited(now);
  }

  private arm(at: number, now: number): void {
    if (at === Number.POSITIVE_INFINITY) {
      this.timer?.clear();
      this.timer = undefined;
      return;
    }
    if (this.timer !== undefined && this.timer.at === at) return;
    this.timer?.clear();
    const handle = this.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.serve();
      },
      Math.max(0, at - now),
    );
    this.timer = { clear: () => handle.clear(), at };
  }

  private sweep(now: number): void {
    this.buckets.sweep(now, () => new Set(this.waiters.flatMap((w) => w.buckets.map((b) => b.key))));
  }
}

function sharesBucket(a: readonly BucketRef[], b: readonly BucketRef[]): boolean {
  return a.some((x) => b.some((y) => y.key === x.key));
}
