import type { BucketRef, BudgetStore } from '../ports.js';
import { BucketFamily } from './family.js';
import { LearnedMemory } from './memory.js';
import { BudgetModel, MINUTE } from './model.js';
import { checkShare } from './share.js';
import type { BudgetView } from './write-scheduler.js';

// The scheduler's buckets: each made on first use (at this replica's share, from what was learned
// before if anything was), forgotten when idle (its lesson is kept), and kept in step with the
// stored lessons of the other replicas. Buckets of one family (BucketRef.family) keep one lesson
// between them: what one learns is spread to the others at once (family.ts).

/** See BucketTableOptions.perPlaceRestMs. */
const PER_PLACE_REST_MS = 60_000;

export interface BucketTableOptions {
  marginMs: number | undefined;
  forgetAfterMs: number;
  /** A per-place bucket at rest this long is forgotten (BudgetModel.atRest); default 60 s. */
  perPlaceRestMs?: number;
  store: BudgetStore | undefined;
  saveEveryMs: number;
  onStoreError: (err: unknown) => void;
}

export class BucketTable {
  private readonly models = new Map<string, BudgetModel>();
  private readonly families = new Map<string, BucketFamily<BudgetModel>>();
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
      const family = ref.family !== undefined ? this.family(ref.family) : undefined;
      s = new BudgetModel({
        key: ref.key,
        limit,
        windowMs,
        marginMs: this.margin(windowMs),
        now,
        share: this.currentShare,
        perPlace: ref.perPlace === true,
        lessonKey: family?.key,
        probeLock: family,
      });
      const learned = this.memory.get(s.lessonKey);
      if (learned !== undefined) s.applyLearned(learned, now);
      family?.members.add(s);
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

  private family(key: string): BucketFamily<BudgetModel> {
    let f = this.families.get(key);
    if (f === undefined) {
      f = new BucketFamily<BudgetModel>(key);
      this.families.set(key, f);
    }
    return f;
  }

  /**
   * Keep what the model learned; saved when due, or at once when forced (a 429, shutdown). A
   * family member's new lesson is saved and spread to the other members at once.
   */
  save(m: BudgetModel, now: number, force = false): void {
    const family = this.families.get(m.lessonKey);
    const lesson = this.memory.save(m, now, force || family !== undefined);
    if (family === undefined || lesson === undefined) return;
    for (const other of family.members) {
      // A member that learned something later keeps its own (it spreads next), and one with a
      // probe out waits for its answer (which it spreads).
      if (other === m || other.probingUp || other.learnedAt > lesson.updatedAt) continue;
      other.applyLearned(lesson, now);
    }
  }

  saveAll(now: number): void {
    for (const s of this.models.values()) this.memory.save(s, now, true);
  }

  /** Merge the stored lessons (newer wins); how many live buckets took another replica's. */
  sync(now: () => number): Promise<number> {
    return this.memory.load((key) => {
      const m = this.models.get(key);
      return m !== undefined ? [m] : (this.families.get(key)?.members ?? []);
    }, now);
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
      if (busy.has(key)) continue;
      const rest = s.perPlace && s.atRest(now, this.opts.perPlaceRestMs ?? PER_PLACE_REST_MS);
      if (!rest && !s.forgettable(now, this.opts.forgetAfterMs)) continue;
      this.memory.save(s, now, true);
      this.models.delete(key);
      const family = this.families.get(s.lessonKey);
      family?.members.delete(s);
      // An empty family is forgotten too, unless it remembers refused probes (their backoff).
      if (family?.members.size === 0 && family.refusals === 0) this.families.delete(s.lessonKey);
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
