import { ChannelBlame, PROBE_MS } from './budget/channel-blame.js';
import { LearnedMemory } from './budget/memory.js';
import { BudgetModel, MINUTE } from './budget/model.js';
import type { WriteOutcome } from './budget/outcome.js';
import type { BucketRef, BudgetStore, Clock, RateLimitInfo, RateLimitObserver } from './ports.js';

export { errorOutcome, okOutcome, unusedOutcome, type WriteOutcome } from './budget/outcome.js';

// One rate-limit scheduler for every platform write of every reply.
//
// Each bucket is a learned token bucket (budget/model.ts): the connector's limit per window is a
// first guess, 429s shrink it, quiet pressure grows it back, headers replace it. A write in a
// workspace-wide bucket that names its channel also counts in an implicit per-channel bucket,
// unlimited until a 429 blames that channel (budget/channel-blame.ts). Every write's outcome comes
// back through its grant's done(): accepted (with headers), refused (429) or failed.
//
// Waiters are served by priority (final > first > edit), FIFO within a priority; since each reply
// has at most one write pending, FIFO gives round-robin fairness across replies. Live replies
// hold their final's budget, so intermediate edits never spend what the finals need.

export type WritePriority = 'final' | 'first' | 'edit';

const PRIORITY_RANK: Record<WritePriority, number> = { final: 0, first: 1, edit: 2 };
const EDIT_RANK = PRIORITY_RANK.edit;

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
  /** Where learned budgets are kept across restarts. */
  store?: BudgetStore;
  /** A bucket's learned budget is written at most this often. Default 5 s. */
  saveEveryMs?: number;
  /** A store that failed (the lesson is kept in memory). */
  onStoreError?: (err: unknown) => void;
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

/** A bucket a write counts in: one of its BucketRefs, or the implicit per-channel bucket of one. */
interface Slot {
  key: string;
  ref: BucketRef;
  shadow: boolean;
}

interface Waiter {
  seq: number;
  rank: number;
  slots: readonly Slot[];
  resolve: (grant: WriteGrant) => void;
  reject: (err: unknown) => void;
  cleanup: () => void;
}

export function shadowKey(key: string, channelKey: string): string {
  return `${key}#${channelKey}`;
}

function expand(buckets: readonly BucketRef[]): Slot[] {
  const slots: Slot[] = [];
  for (const ref of buckets) {
    slots.push({ key: ref.key, ref, shadow: false });
    if (ref.channelKey !== undefined) slots.push({ key: shadowKey(ref.key, ref.channelKey), ref, shadow: true });
  }
  return slots;
}

export class RateLimitScheduler implements WriteScheduler {
  private readonly clock: Clock;
  private readonly marginOverride: number | undefined;
  private readonly forgetAfterMs: number;
  private readonly horizonMs: number;
  private readonly buckets = new Map<string, BudgetModel>();
  private readonly memory: LearnedMemory;
  private readonly blame = new ChannelBlame();
  /** Sorted by (rank, seq). */
  private waiters: Waiter[] = [];
  private seq = 0;
  private timer: { clear(): void; at: number } | undefined;
  private lastSweep = 0;

  constructor(opts: SchedulerOptions) {
    this.clock = opts.clock;
    this.marginOverride = opts.marginMs;
    this.forgetAfterMs = opts.forgetAfterMs ?? 10 * MINUTE;
    this.horizonMs = opts.finalHorizonMs ?? 2000;
    this.memory = new LearnedMemory(opts.store, opts.saveEveryMs ?? 5000, opts.onStoreError ?? (() => {}));
  }

  acquire(buckets: readonly BucketRef[], priority: WritePriority, signal?: AbortSignal): Promise<WriteGrant> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const now = this.clock.now();
    this.sweep(now);
    const slots = expand(buckets);
    const states = slots.map((s) => this.state(s, now));
    const rank = PRIORITY_RANK[priority];
    // Fast path without a timer hop: nobody queued for these buckets and all have budget.
    if (
      !this.waiters.some((w) => sharesBucket(w.slots, slots)) &&
      states.every((s) => s.readyAt(now, rank === EDIT_RANK, this.horizonMs) <= now)
    ) {
      return Promise.resolve(this.grantAll(slots, states, now));
    }
    return new Promise<WriteGrant>((resolve, reject) => {
      const waiter: Waiter = { seq: this.seq++, rank, slots, resolve, reject, cleanup: () => {} };
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
    this.limitedKey(bucket, retryAfterMs, now);
    this.serve();
  }

  hold(buckets: readonly BucketRef[]): () => void {
    const now = this.clock.now();
    const states = expand(buckets).map((s) => this.state(s, now));
    for (const s of states) s.held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const s of states) s.held = Math.max(0, s.held - 1);
      this.serve();
    };
  }

  canAffordFinal(buckets: readonly BucketRef[]): boolean {
    const now = this.clock.now();
    return expand(buckets).every((slot) => this.state(slot, now).affords(now, this.horizonMs, 1));
  }

  /** Numbers for tests and metrics. */
  stats(): { buckets: number; waiting: number } {
    return { buckets: this.buckets.size, waiting: this.waiters.length };
  }

  /** A bucket's current model (per minute), for tests and metrics; undefined if not known. */
  budget(key: string): { perMinute: number; burst: number; blockedUntil: number; learned: boolean } | undefined {
    const s = this.buckets.get(key);
    if (s === undefined) return undefined;
    return {
      perMinute: s.unlimited ? Number.POSITIVE_INFINITY : s.rate * MINUTE,
      burst: s.burst,
      blockedUntil: s.blockedUntil,
      learned: Number.isFinite(s.lastShrinkAt),
    };
  }

  /** Reject every waiter, stop the timer and save what was learned (shutdown). */
  close(reason: unknown = new Error('scheduler closed')): void {
    this.timer?.clear();
    this.timer = undefined;
    const now = this.clock.now();
    for (const s of this.buckets.values()) this.memory.save(s, now, true);
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) {
      w.cleanup();
      w.reject(reason);
    }
  }

  private margin(windowMs: number): number {
    return this.marginOverride ?? Math.max(50, Math.ceil(windowMs * 0.05));
  }

  private state(slot: Slot, now: number): BudgetModel {
    let s = this.buckets.get(slot.key);
    if (s === undefined) {
      const { limit, windowMs } = slot.ref;
      s = new BudgetModel({
        key: slot.key,
        limit,
        windowMs,
        marginMs: this.margin(windowMs),
        now,
        shadow: slot.shadow,
      });
      const learned = this.memory.get(slot.key);
      if (learned !== undefined) s.applyLearned(learned, now);
      this.buckets.set(slot.key, s);
    } else if (s.provisional) {
      s.reconfigure(slot.ref.limit, slot.ref.windowMs, this.margin(slot.ref.windowMs), now);
    }
    return s;
  }

  private limitedKey(bucket: string, retryAfterMs: number, now: number): void {
    let s = this.buckets.get(bucket);
    if (s === undefined) {
      // A 429 on a bucket we have no state for: remember the block until a write names it.
      s = new BudgetModel({ key: bucket, limit: 1, windowMs: retryAfterMs, marginMs: this.margin(retryAfterMs), now });
      s.provisional = true;
      this.buckets.set(bucket, s);
    }
    s.lastLimitedAt = now;
    s.block(now, retryAfterMs);
  }

  /** Grant a write in every bucket; its done() reports what the platform said. */
  private grantAll(slots: readonly Slot[], states: readonly BudgetModel[], at: number): WriteGrant {
    for (const s of states) s.grant(at);
    let settled = false;
    return {
      done: (outcome: WriteOutcome = { ok: true }) => {
        if (settled) return;
        settled = true;
        const now = this.clock.now();
        for (const s of states) s.settle();
        if (outcome.ok) this.accepted(slots, states, at, outcome.rateLimits ?? [], now);
        else if ('rateLimited' in outcome) this.refused(slots, states, at, outcome.rateLimited, now);
        else if ('unused' in outcome) for (const s of states) s.refund();
        // A write that failed otherwise may have counted: its token stays spent.
        for (const s of states) this.memory.save(s, now);
        this.serve();
      },
    };
  }

  private accepted(
    slots: readonly Slot[],
    states: readonly BudgetModel[],
    grantedAt: number,
    rateLimits: readonly RateLimitInfo[],
    now: number,
  ): void {
    slots.forEach((slot, i) => {
      (states[i] as BudgetModel).accept(now);
      const channel = slot.ref.channelKey;
      if (slot.shadow || channel === undefined) return;
      const confirmed = this.blame.accepted(slot.key, channel, now, grantedAt);
      if (confirmed === undefined) return;
      // Another channel's write went through the workspace bucket after a 429 in `confirmed`:
      // that channel has a limit of its own. Learn it, paced from the end of its block.
      (states[i] as BudgetModel).endProbe();
      const shadow = this.buckets.get(shadowKey(slot.key, confirmed));
      if (shadow === undefined) return;
      shadow.learn(now, now);
      shadow.block(now, Math.max(0, shadow.blockedUntil - now - shadow.marginMs));
      this.memory.save(shadow, now);
    });
    for (const info of rateLimits) this.buckets.get(info.bucket)?.observe(info, now);
  }

  private refused(
    slots: readonly Slot[],
    states: readonly BudgetModel[],
    grantedAt: number,
    rl: { retryAfterMs: number; bucket?: string; global?: boolean },
    now: number,
  ): void {
    // The refused write was not spent anywhere.
    for (const s of states) s.refund();
    if (rl.global) {
      // The platform paused everything for a moment: block, but no bucket of ours is to blame.
      slots.forEach((slot, i) => {
        if (!slot.shadow) (states[i] as BudgetModel).block(now, rl.retryAfterMs);
      });
      return;
    }
    const i = rl.bucket === undefined ? 0 : slots.findIndex((s) => !s.shadow && s.key === rl.bucket);
    if (i < 0) {
      this.limitedKey(rl.bucket as string, rl.retryAfterMs, now);
      return;
    }
    const slot = slots[i] as Slot;
    const target = states[i] as BudgetModel;
    const channel = slot.ref.channelKey;
    if (channel !== undefined) {
      const shadow = this.state({ key: shadowKey(slot.key, channel), ref: slot.ref, shadow: true }, now);
      const blame = this.blame.limited(slot.key, channel, now, rl.retryAfterMs, !shadow.unlimited);
      if (blame !== 'workspace') {
        // Only this channel waits; the other channels go on in the workspace bucket.
        if (blame === 'channel') shadow.learn(now, grantedAt);
        else {
          shadow.lastLimitedAt = now;
          target.probe(now, PROBE_MS);
        }
        shadow.block(now, rl.retryAfterMs);
        return;
      }
    }
    target.learn(now, grantedAt);
    target.block(now, rl.retryAfterMs);
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
      if (w.slots.some((s) => reserved.has(s.key))) {
        remaining.push(w);
        continue;
      }
      const states = w.slots.map((s) => this.state(s, now));
      const ready = states.map((s) => s.readyAt(now, w.rank === EDIT_RANK, this.horizonMs));
      const at = Math.max(0, ...ready);
      if (at <= now) {
        granted.push([w, this.grantAll(w.slots, states, now)]);
      } else {
        // A write held only by its channel's own limit leaves the workspace budget to the other
        // channels (a per-channel 429 must not block them); otherwise it keeps all it waits for.
        const onlyChannel = w.slots.every((s, i) => s.shadow || (ready[i] as number) <= now);
        for (const s of w.slots) if (!onlyChannel || s.shadow) reserved.add(s.key);
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

  /** Forget buckets idle long enough (bounded memory); what they learned stays in LearnedMemory. */
  private sweep(now: number): void {
    if (now - this.lastSweep < 1000 && this.buckets.size < 10_000) return;
    this.lastSweep = now;
    const inUse = new Set(this.waiters.flatMap((w) => w.slots.map((s) => s.key)));
    for (const [key, s] of this.buckets) {
      if (inUse.has(key) || !s.forgettable(now, this.forgetAfterMs)) continue;
      this.memory.save(s, now, true);
      this.buckets.delete(key);
      if (!s.shadow) this.blame.forget(key);
    }
  }
}

function sharesBucket(a: readonly Slot[], b: readonly Slot[]): boolean {
  return a.some((x) => b.some((y) => y.key === x.key));
}
