import type { BucketRef, Clock, RateLimitInfo, RateLimitObserver } from './ports.js';

// One rate-limit scheduler for every platform write of every reply.
//
// Each bucket keeps a log of the times its writes were answered (see WriteGrant) and allows at
// most `limit` of them in any window of `windowMs + margin` (a sliding window is never looser
// than the platforms' fixed windows, and the margin absorbs clock jitter and request latency).
// What the platform says replaces the defaults: a learned limit, a `remaining` allowance until
// the reset, and blocks from 429s. Waiters are served by priority (final > first > edit), FIFO
// within a priority; since each reply has at most one write pending, FIFO gives round-robin
// fairness across replies.

export type WritePriority = 'final' | 'first' | 'edit';

const PRIORITY_RANK: Record<WritePriority, number> = { final: 0, first: 1, edit: 2 };
const EDIT_RANK = PRIORITY_RANK.edit;

export interface SchedulerOptions {
  clock: Clock;
  /** Added to every window and block; defaults to max(50 ms, 5% of the window). */
  marginMs?: number;
  /** A bucket with no activity for this long is forgotten (bounded memory). Default 10 min. */
  forgetAfterMs?: number;
}

/**
 * A granted write. `done()` once the platform answered: the write then counts in its buckets
 * from that moment, not from the grant, since the platform counted it somewhere in between —
 * under load a request can reach it hundreds of ms after the grant, and the next one less late.
 */
export interface WriteGrant {
  done(): void;
}

/** What a ReplyWriter needs: acquire before a write, report what the platform said after it. */
export interface WriteScheduler extends RateLimitObserver {
  acquire(buckets: readonly BucketRef[], priority: WritePriority, signal?: AbortSignal): Promise<WriteGrant>;
  /**
   * A live reply will need one final write in these buckets: intermediate edits leave that much
   * budget free, so finals never wait behind edits. Returns the release (idempotent).
   */
  hold(buckets: readonly BucketRef[]): () => void;
}

interface BucketState {
  key: string;
  limit: number;
  windowMs: number;
  /** Times of granted writes (moved to their answer by done()), oldest first; at most `limit`. */
  grants: number[];
  blockedUntil: number;
  /** From headers: at most `remaining` more grants until `until`. */
  allowance: { remaining: number; until: number } | undefined;
  lastActivity: number;
  /** Made by a 429 before any write: the first BucketRef seen supplies the real budget. */
  provisional: boolean;
  /** Final writes that live replies will need here (see hold). */
  held: number;
}

interface Waiter {
  seq: number;
  rank: number;
  buckets: readonly BucketRef[];
  resolve: (grant: WriteGrant) => void;
  reject: (err: unknown) => void;
  cleanup: () => void;
}

export class RateLimitScheduler implements WriteScheduler {
  private readonly clock: Clock;
  private readonly marginOverride: number | undefined;
  private readonly forgetAfterMs: number;
  private readonly buckets = new Map<string, BucketState>();
  /** Sorted by (rank, seq). */
  private waiters: Waiter[] = [];
  private seq = 0;
  private timer: { clear(): void; at: number } | undefined;
  private lastSweep = 0;

  constructor(opts: SchedulerOptions) {
    this.clock = opts.clock;
    this.marginOverride = opts.marginMs;
    this.forgetAfterMs = opts.forgetAfterMs ?? 10 * 60_000;
  }

  acquire(buckets: readonly BucketRef[], priority: WritePriority, signal?: AbortSignal): Promise<WriteGrant> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const now = this.clock.now();
    this.sweep(now);
    const states = buckets.map((b) => this.state(b, now));
    const rank = PRIORITY_RANK[priority];
    // Fast path without a timer hop: nobody queued for these buckets and all have budget.
    if (
      !this.waiters.some((w) => sharesBucket(w.buckets, buckets)) &&
      states.every((s) => this.readyAt(s, now, rank) <= now)
    ) {
      return Promise.resolve(this.grantAll(states, now));
    }
    return new Promise<WriteGrant>((resolve, reject) => {
      const waiter: Waiter = {
        seq: this.seq++,
        rank,
        buckets,
        resolve,
        reject,
        cleanup: () => {},
      };
      if (signal !== undefined) {
        const onAbort = () => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(signal.reason);
          this.serve();
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiter.cleanup = () => signal.removeEventListener('abort', onAbort);
      }
      this.insert(waiter);
      this.serve();
    });
  }

  observe(info: RateLimitInfo): void {
    const now = this.clock.now();
    const s = this.buckets.get(info.bucket);
    if (s === undefined) return; // a bucket we never wrote to: nothing to correct
    if (info.limit !== undefined && info.limit > 0) {
      s.limit = info.limit;
      if (s.grants.length > s.limit) s.grants.splice(0, s.grants.length - s.limit);
    }
    if (info.resetAfterMs !== undefined && info.resetAfterMs > s.windowMs) s.windowMs = info.resetAfterMs;
    if (info.remaining !== undefined && info.resetAfterMs !== undefined) {
      const until = now + info.resetAfterMs + this.margin(s);
      if (info.remaining <= 0) s.blockedUntil = Math.max(s.blockedUntil, until);
      else s.allowance = { remaining: info.remaining, until };
    }
    s.lastActivity = now;
    this.serve();
  }

  limited(bucket: string, retryAfterMs: number): void {
    const now = this.clock.now();
    let s = this.buckets.get(bucket);
    if (s === undefined) {
      // A 429 on a bucket we have no state for (e.g. reported out of band): remember the block.
      s = this.state({ key: bucket, limit: 1, windowMs: retryAfterMs }, now);
      s.provisional = true;
    }
    s.blockedUntil = Math.max(s.blockedUntil, now + retryAfterMs + this.margin(s));
    s.lastActivity = now;
    this.serve();
  }

  hold(buckets: readonly BucketRef[]): () => void {
    const now = this.clock.now();
    const states = buckets.map((b) => this.state(b, now));
    for (const s of states) s.held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const s of states) s.held = Math.max(0, s.held - 1);
      this.serve();
    };
  }

  /** Numbers for tests. */
  stats(): { buckets: number; waiting: number } {
    return { buckets: this.buckets.size, waiting: this.waiters.length };
  }

  /** Reject every waiter and stop the timer (tests; the service lets replies write their finals). */
  close(reason: unknown = new Error('scheduler closed')): void {
    this.timer?.clear();
    this.timer = undefined;
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) {
      w.cleanup();
      w.reject(reason);
    }
  }

  private margin(s: { windowMs: number }): number {
    return this.marginOverride ?? Math.max(50, Math.ceil(s.windowMs * 0.05));
  }

  private state(ref: BucketRef, now: number): BucketState {
    let s = this.buckets.get(ref.key);
    if (s === undefined) {
      s = {
        key: ref.key,
        limit: Math.max(1, ref.limit),
        windowMs: ref.windowMs,
        grants: [],
        blockedUntil: 0,
        allowance: undefined,
        lastActivity: now,
        provisional: false,
        held: 0,
      };
      this.buckets.set(ref.key, s);
    } else if (s.provisional) {
      s.provisional = false;
      s.limit = Math.max(1, ref.limit);
      s.windowMs = ref.windowMs;
    }
    return s;
  }

  /**
   * The earliest time a write of this rank may be granted in this bucket. Intermediate edits leave
   * the budget held for live replies' finals; with more replies than budget they wait (possibly
   * for good: the reply's final write then carries all its text) — edits slow down, finals do not.
   */
  private readyAt(s: BucketState, now: number, rank: number): number {
    const keep = rank === EDIT_RANK ? s.held : 0;
    const cap = s.limit - keep;
    if (cap <= 0) return Number.POSITIVE_INFINITY;
    let at = s.blockedUntil;
    if (s.allowance !== undefined) {
      if (now >= s.allowance.until) s.allowance = undefined;
      else if (s.allowance.remaining <= keep) at = Math.max(at, s.allowance.until);
    }
    if (s.grants.length >= cap) {
      const oldest = s.grants[s.grants.length - cap] as number;
      at = Math.max(at, oldest + s.windowMs + this.margin(s));
    }
    return at;
  }

  /** Grant a write in every bucket; its done() moves the grant's time to when the platform answered. */
  private grantAll(states: readonly BucketState[], at: number): WriteGrant {
    for (const s of states) this.grant(s, at);
    let settled = false;
    return {
      done: () => {
        if (settled) return;
        settled = true;
        const now = this.clock.now();
        if (now <= at) return;
        for (const s of states) {
          const i = s.grants.lastIndexOf(at);
          if (i < 0) continue; // already out of the log
          s.grants[i] = now;
          s.grants.sort((a, b) => a - b);
        }
      },
    };
  }

  private grant(s: BucketState, now: number): void {
    s.grants.push(now);
    if (s.grants.length > s.limit) s.grants.splice(0, s.grants.length - s.limit);
    if (s.allowance !== undefined) s.allowance.remaining--;
    s.lastActivity = now;
  }

  private insert(w: Waiter): void {
    let i = this.waiters.length;
    while (i > 0) {
      const prev = this.waiters[i - 1] as Waiter;
      if (prev.rank < w.rank || (prev.rank === w.rank && prev.seq < w.seq)) break;
      i--;
    }
    this.waiters.splice(i, 0, w);
  }

  /**
   * Grant every waiter that can go, in priority order. A waiter that cannot go reserves its
   * buckets, so a later (lower-priority) waiter cannot take the budget it is waiting for.
   */
  private serve(): void {
    const now = this.clock.now();
    const reserved = new Set<string>();
    let nextAt = Number.POSITIVE_INFINITY;
    const remaining: Waiter[] = [];
    const granted: Array<[Waiter, WriteGrant]> = [];
    for (const w of this.waiters) {
      if (w.buckets.some((b) => reserved.has(b.key))) {
        remaining.push(w);
        continue;
      }
      const states = w.buckets.map((b) => this.state(b, now));
      const at = states.reduce((m, s) => Math.max(m, this.readyAt(s, now, w.rank)), 0);
      if (at <= now) {
        granted.push([w, this.grantAll(states, now)]);
      } else {
        for (const b of w.buckets) reserved.add(b.key);
        nextAt = Math.min(nextAt, at);
        remaining.push(w);
      }
    }
    this.waiters = remaining;
    this.arm(nextAt, now);
    for (const [w, grant] of granted) {
      w.cleanup();
      w.resolve(grant);
    }
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

  /** Forget buckets idle long enough that they hold no limit worth knowing (bounded memory). */
  private sweep(now: number): void {
    if (now - this.lastSweep < 1000 && this.buckets.size < 10_000) return;
    this.lastSweep = now;
    const inUse = new Set(this.waiters.flatMap((w) => w.buckets.map((b) => b.key)));
    for (const [key, s] of this.buckets) {
      if (inUse.has(key) || s.held > 0) continue;
      const quietSince = Math.max(s.lastActivity, s.blockedUntil, s.allowance?.until ?? 0);
      const windowOver = (s.grants.at(-1) ?? 0) + s.windowMs + this.margin(s) <= now;
      if (windowOver && now - quietSince >= this.forgetAfterMs) this.buckets.delete(key);
    }
  }
}

function sharesBucket(a: readonly BucketRef[], b: readonly BucketRef[]): boolean {
  return a.some((x) => b.some((y) => y.key === x.key));
}
