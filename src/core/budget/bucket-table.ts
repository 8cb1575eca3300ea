import type { BucketRef, BudgetStore } from '../ports.js';
import { LearnedMemory } from './memory.js';
import { BudgetModel, MINUTE } from './model.js';
import { checkShare } from './share.js';
import type { BudgetView } from './write-scheduler.js';

// The scheduler's buckets: each made on first use (at this replica's share, from what was learned
// before if anything was), forgotten when idle (its lesson is kept), and kept in step with the
// stored lessons of the other replicas.

export interface BucketTableOptions {
  marginMs: number | undefined;
  forgetAfterMs: number;
  store: BudgetStore | undefined;
  saveEveryMs: number;
  onStoreError: (err: unknown) => void;
}

export class BucketTable {
  private readonly models = new Map<string, BudgetModel>();
  private readonly memory: LearnedMemory;
  private currentShare = 1;
  private lastSweep = 0;

  constructor(private readonly opts: BucketTableOptions) {
    this.memory = new LearnedMemory(opts.store, opts.saveEveryMs, opts.onStoreError);
  }

  get share(): number {
    return this.currentShare;
  }

  get size(): number {
    return this.models.size;
  }

  get(key: string): BudgetModel | undefined {
    return this.models.get(key);
  }

  /** Every bucket now spends `fraction` of the platform's; new ones will too. false: unchanged. */
  setShare(fraction: number, now: number): boolean {
    checkShare(fraction);
    if (fraction === this.currentShare) return false;
    this.currentShare = fraction;
    for (const m of this.models.values()) m.setShare(fraction, now); // per-place ones keep 1
    return true;
  }

  margin(windowMs: number): number {
    return this.opts.marginMs ?? Math.max(50, Math.ceil(windowMs * 0.05));
  }

  /** The model of a bucket, made on first use. */
  state(ref: BucketRef, now: number): BudgetModel {
    let s = this.models.get(ref.key);
    if (s === undefined) {
      const { limit, windowMs } = ref;
      s = new BudgetModel({
        key: ref.key,
        limit,
        windowMs,
        marginMs: this.margin(windowMs),
        now,
        share: this.currentShare,
        perPlace: ref.perPlace === true,
      });
      const learned = this.memory.get(ref.key);
      if (learned !== undefined) s.applyLearned(learned, now);
      this.models.set(ref.key, s);
    } else if (s.provisional) {
      s.reconfigure(ref.limit, ref.windowMs, this.margin(ref.windowMs), now);
    }
    return s;
  }

  /** When this replica last spent a token in `key`, if it has the bucket. */
  lastGrantAt(key: string): number | undefined {
    return this.models.get(key)?.lastGrantAt;
  }

  /** A 429 on `bucket`: blocked for the Retry-After, and paced after. */
  limited(bucket: string, retryAfterMs: number, now: number): void {
    let s = this.models.get(bucket);
    if (s === undefined) {
      // A 429 on a bucket we have no state for: remember the block until a write names it.
      s = new BudgetModel({
        key: bucket,
        limit: 1,
        windowMs: retryAfterMs,
        marginMs: this.margin(retryAfterMs),
        now,
        share: this.currentShare,
      });
      s.provisional = true;
      this.models.set(bucket, s);
    }
    s.lastLimitedAt = now;
    s.block(now, retryAfterMs);
  }

  /** Keep what the model learned; saved when due, or at once when forced (a 429, shutdown). */
  save(m: BudgetModel, now: number, force = false): void {
    this.memory.save(m, now, force);
  }

  saveAll(now: number): void {
    for (const s of this.models.values()) this.memory.save(s, now, true);
  }

  /** Merge the stored lessons (newer wins); how many live buckets took another replica's. */
  sync(now: () => number): Promise<number> {
    return this.memory.load((key) => this.models.get(key), now);
  }

  flush(): Promise<void> {
    return this.memory.flush();
  }

  /**
   * Forget buckets idle long enough (bounded memory), except those in `inUse`; what they learned
   * stays in LearnedMemory.
   */
  sweep(now: number, inUse: () => ReadonlySet<string>): void {
    if (now - this.lastSweep < 1000 && this.models.size < 10_000) return;
    this.lastSweep = now;
    const busy = inUse();
    for (const [key, s] of this.models) {
      if (busy.has(key) || !s.forgettable(now, this.opts.forgetAfterMs)) continue;
      this.memory.save(s, now, true);
      this.models.delete(key);
    }
  }

  view(key: string): BudgetView | undefined {
    const s = this.models.get(key);
    if (s === undefined) return undefined;
    return {
      perMinute: s.rate * MINUTE,
      burst: s.burst,
      mine: { perMinute: s.myRate * MINUTE, burst: s.myBurst },
      blockedUntil: s.blockedUntil,
      learned: Number.isFinite(s.lastShrinkAt),
    };
  }
}
