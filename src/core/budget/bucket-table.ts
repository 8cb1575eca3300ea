import type { BucketRef, BudgetStore, Lesson } from '../ports.js';
import { Bucket } from './bucket.js';
import { BUDGET } from './budget-settings.js';
import { blamesPlace, placeMarginMs, placeRun } from './place-blame.js';
import type { ProbeLock } from './probe-lock.js';
import type { BudgetView, PlaceWrite, WriteOutcome } from './write-scheduler.js';

// The scheduler's buckets: each made on first use (at this replica's share, from its lesson if
// there is one), forgotten when idle (its lesson is kept), and kept in step with the lessons of
// the other replicas.
//
// Lessons: what a bucket learned, kept beyond its runtime state, in memory and, when a store is
// given, in the database (a restart does not relearn its limits by 429s, and replicas sharing the
// database learn from each other). A lesson is the whole platform's bucket, dated by when it was
// learned; the newer `updatedAt` wins, in memory as in the database. A bucket's lesson is written
// at most once per saveEveryMs (a 429's at once, the rest on a later change, when forgotten or at
// close). Saves are fire-and-forget: a failure is reported and the lesson stays in memory.
//
// Families (BucketRef.family: Slack's per-channel posts): per-place buckets the platform limits
// alike. One channel rarely sees a burst big enough to learn from, but all have the same limit: a
// lesson one member learns is every member's at once, and only one member at a time probes above
// the confirmed burst (the family's ProbeLock), so a platform with no more room refuses one probe.

export interface BucketTableOptions {
  marginMs: number | undefined;
  forgetAfterMs: number;
  /** A per-place bucket at rest this long is forgotten (Bucket.atRest). */
  perPlaceRestMs?: number;
  store: BudgetStore | undefined;
  saveEveryMs: number;
  onStoreError: (err: unknown) => void;
}

interface Family {
  readonly key: string;
  readonly lock: Lock;
  readonly members: Set<Bucket>;
}

export class BucketTable {
  private readonly buckets = new Map<string, Bucket>();
  private readonly families = new Map<string, Family>();
  private readonly lessons = new Map<string, Lesson>();
  private readonly pending = new Set<Promise<void>>();
  /** Wider bucket → the last place a 429 of it was blamed on, until that place's block ends. */
  private readonly placeBlames = new Map<string, { place: string; until: number }>();
  private currentShare = 1;
  private lastSweep = 0;

  constructor(private readonly opts: BucketTableOptions) {}

  get share(): number {
    return this.currentShare;
  }

  get size(): number {
    return this.buckets.size;
  }

  get(key: string): Bucket | undefined {
    return this.buckets.get(key);
  }

  /** Every bucket now spends `fraction` of the platform's; new ones will too. false: unchanged. */
  setShare(fraction: number, now: number): boolean {
    if (!(fraction > 0 && fraction <= 1)) throw new RangeError(`a budget share is in (0, 1], not ${fraction}`);
    if (fraction === this.currentShare) return false;
    this.currentShare = fraction;
    for (const b of this.buckets.values()) b.setShare(fraction, now); // per-place ones keep 1
    return true;
  }

  private margin(windowMs: number): number {
    return this.opts.marginMs ?? Math.max(BUDGET.minMarginMs, Math.ceil(windowMs * BUDGET.marginFraction));
  }

  /** The bucket of a ref, made on first use. */
  bucket(ref: BucketRef, now: number): Bucket {
    const { key, limit, windowMs } = ref;
    let b = this.buckets.get(key);
    if (b === undefined) {
      const family = ref.family !== undefined ? this.family(ref.family) : undefined;
      const marginMs = this.margin(windowMs);
      const perPlace = ref.perPlace === true;
      const lock = family?.lock ?? new Lock();
      const share = this.currentShare;
      const placeOf = ref.placeOf;
      b = new Bucket({ key, limit, windowMs, marginMs, now, share, perPlace, family: family?.key, lock, placeOf });
      const lesson = this.lessons.get(b.lessonKey);
      if (lesson !== undefined) b.applyLesson(lesson, now);
      family?.members.add(b);
      this.buckets.set(key, b);
    } else if (b.learned.provisional) {
      b.reconfigure({ limit, windowMs, marginMs: this.margin(windowMs) }, now);
    }
    return b;
  }

  /** A 429 on `key` that no granted write of ours met: blocked for the Retry-After, paced after. */
  limited(key: string, retryAfterMs: number, now: number): void {
    let b = this.buckets.get(key);
    if (b === undefined) {
      // No state for it: remember the block until a write names the bucket (and its budget).
      const marginMs = this.margin(retryAfterMs);
      const lock = new Lock();
      const share = this.currentShare;
      b = new Bucket({ key, limit: 1, windowMs: retryAfterMs, marginMs, now, share, lock, provisional: true });
      this.buckets.set(key, b);
    }
    b.limited(now, retryAfterMs);
  }

  private family(key: string): Family {
    let f = this.families.get(key);
    if (f === undefined) {
      f = { key, lock: new Lock(), members: new Set() };
      this.families.set(key, f);
    }
    return f;
  }

  /**
   * A granted write was answered: accepted (with headers), refused (429: the bucket the platform
   * names, or the write's first, shrinks and is blocked; a global 429 blocks all, blames none), or
   * failed otherwise (its token stays spent: it may have counted). Its lessons are kept, a 429's
   * at once (for the other replicas' next sync).
   */
  answered(buckets: readonly Bucket[], grantedAt: number, outcome: WriteOutcome, now: number): void {
    for (const b of buckets) b.settle();
    if (outcome.ok) {
      for (const b of buckets) b.accept(now);
      for (const info of outcome.rateLimits ?? []) this.buckets.get(info.bucket)?.observe(info, now);
    } else if ('rateLimited' in outcome) {
      const rl = outcome.rateLimited;
      for (const b of buckets) b.refund(); // the refused write was not spent anywhere
      const target = rl.bucket === undefined ? buckets[0] : buckets.find((b) => b.key === rl.bucket);
      if (rl.global === true) for (const b of buckets) b.block(now, rl.retryAfterMs);
      else if (target === undefined) this.limited(rl.bucket as string, rl.retryAfterMs, now);
      else {
        const place = this.blamedPlace(buckets, target, rl.retryAfterMs, now);
        if (place !== undefined) place.placeBlamed(now, grantedAt, rl.retryAfterMs);
        else {
          target.shrink(now, grantedAt);
          target.block(now, rl.retryAfterMs);
        }
      }
    } else if ('unused' in outcome) for (const b of buckets) b.refund();
    for (const b of buckets) this.save(b, now, b.learned.lastLimitedAt === now);
  }

  /** The place bucket of the write a 429 of `target` is blamed on, if the evidence says so. */
  private blamedPlace(buckets: readonly Bucket[], target: Bucket, retryAfterMs: number, now: number) {
    const place = buckets.find((b) => b.placeOf === target.key);
    if (place === undefined) return undefined;
    const last = this.placeBlames.get(target.key);
    const runs = { placeRun: placeRun(place.learned, now), wholeRun: placeRun(target.learned, now) };
    if (!blamesPlace({ ...runs, place: place.key, last, now })) {
      const fresh = last !== undefined && now < last.until && last.place !== place.key;
      const wrong = fresh ? this.buckets.get(last.place) : undefined;
      if (wrong !== undefined) {
        // Another place refused while the last blamed one is blocked: that blame was wrong.
        this.placeBlames.delete(target.key);
        wrong.placeCleared(now);
        this.save(wrong, now, true);
      }
      return undefined;
    }
    this.placeBlames.set(target.key, { place: place.key, until: now + retryAfterMs + placeMarginMs(retryAfterMs) });
    return place;
  }

  /**
   * Keep what the bucket learned: when due, or at once when forced (a 429, shutdown). A family
   * member's lesson is kept at once and becomes the other members'.
   */
  save(b: Bucket, now: number, force = false): void {
    const family = this.families.get(b.lessonKey);
    const lesson = this.keep(b, now, force || family !== undefined);
    if (family === undefined || lesson === undefined) return;
    for (const other of family.members) {
      // A member that learned something later keeps its own (it spreads next), and one with a
      // probe out waits for its answer (which it spreads).
      if (other === b || other.probingUp || other.learned.learnedAt > lesson.updatedAt) continue;
      other.applyLesson(lesson, now);
    }
  }

  saveAll(now: number): void {
    for (const b of this.buckets.values()) this.keep(b, now, true);
  }

  /** Take the bucket's lesson if due: into memory, and to the store (fire-and-forget). */
  private keep(b: Bucket, now: number, force: boolean): Lesson | undefined {
    const lesson = b.takeLesson(now, this.opts.saveEveryMs, force);
    if (lesson === undefined) return undefined;
    this.remember(lesson);
    const store = this.opts.store;
    if (store === undefined) return lesson;
    let p: Promise<void>;
    try {
      p = store.save(lesson);
    } catch (err) {
      this.opts.onStoreError(err); // a store that throws rather than rejects
      return lesson;
    }
    // Losing a lesson only costs a 429 after a restart (or on another replica); writes go on.
    const tracked = p.catch((err: unknown) => this.opts.onStoreError(err)).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
    return lesson;
  }

  private remember(l: Lesson): void {
    this.lessons.delete(l.key);
    this.lessons.set(l.key, l);
    if (this.lessons.size > BUDGET.maxLessons) {
      const oldest = this.lessons.keys().next();
      if (!oldest.done) this.lessons.delete(oldest.value);
    }
  }

  /**
   * Read the stored lessons and merge them (newer wins), into memory and into the live buckets (a
   * family's key gives every member). Returns how many live buckets took one. A failed read is
   * reported and changes nothing.
   */
  async sync(now: () => number): Promise<number> {
    const store = this.opts.store;
    if (store === undefined) return 0;
    let rows: Lesson[];
    try {
      rows = await store.load();
    } catch (err) {
      this.opts.onStoreError(err);
      return 0;
    }
    const at = now();
    let applied = 0;
    for (const row of rows) {
      const known = this.lessons.get(row.key);
      if (known === undefined || known.updatedAt < row.updatedAt) this.remember(row);
      const b = this.buckets.get(row.key);
      for (const live of b !== undefined ? [b] : (this.families.get(row.key)?.members ?? [])) {
        if (live.learned.learnedAt >= row.updatedAt) continue;
        live.applyLesson(row, at);
        applied++;
      }
    }
    return applied;
  }

  /** Resolves when every save started so far has ended (before the database closes). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  /** Forget buckets idle long enough (bounded memory), except those in `inUse`; lessons stay. */
  sweep(now: number, inUse: () => ReadonlySet<string>): void {
    if (now - this.lastSweep < BUDGET.sweepEveryMs && this.buckets.size < BUDGET.maxBuckets) return;
    this.lastSweep = now;
    const busy = inUse();
    for (const [key, b] of this.buckets) {
      if (busy.has(key)) continue;
      const rest = b.perPlace && b.atRest(now, this.opts.perPlaceRestMs ?? BUDGET.perPlaceRestMs);
      if (!rest && !b.forgettable(now, this.opts.forgetAfterMs)) continue;
      this.keep(b, now, true);
      this.buckets.delete(key);
      const family = this.families.get(b.lessonKey);
      family?.members.delete(b);
      // An empty family is forgotten too, unless it remembers refused probes (their backoff).
      if (family?.members.size === 0 && family.lock.refusals === 0) this.families.delete(b.lessonKey);
    }
    // A blame whose block is over says nothing any more (one per workspace at most, but workspaces come and go).
    for (const [key, blame] of this.placeBlames) if (now >= blame.until) this.placeBlames.delete(key);
  }

  /** This replica's last writes in per-place buckets (BucketRef.perPlace), to hand a place over. */
  placeWrites(refs: readonly BucketRef[]): PlaceWrite[] {
    const writes: PlaceWrite[] = [];
    for (const bucket of refs) {
      const at = bucket.perPlace === true ? this.buckets.get(bucket.key)?.lastGrantAt : undefined;
      if (at !== undefined) writes.push({ bucket, at });
    }
    return writes;
  }

  /** Another replica wrote last in these places: the buckets were spent then. */
  handOver(writes: readonly PlaceWrite[], now: number): void {
    for (const w of writes) if (w.bucket.perPlace === true) this.bucket(w.bucket, now).spentAt(w.at, now);
  }

  view(key: string): BudgetView | undefined {
    return this.buckets.get(key)?.view();
  }
}

/** A family's (or one bucket's own) right to probe, and how many probes were refused in a row. */
export class Lock implements ProbeLock {
  private prober: { key: string; until: number } | undefined;
  private refusedInRow = 0;

  get refusals(): number {
    return this.refusedInRow;
  }

  mayProbe(key: string, now: number): boolean {
    return this.prober === undefined || this.prober.key === key || now >= this.prober.until;
  }

  take(key: string, now: number): void {
    this.prober = { key, until: now + BUDGET.probeLockMs };
  }

  release(key: string): void {
    if (this.prober?.key === key) this.prober = undefined;
  }

  /** A probe was confirmed: the backoff starts over. */
  confirmed(): void {
    this.refusedInRow = 0;
  }

  refused(key: string): void {
    this.release(key);
    this.refusedInRow++;
  }
}
