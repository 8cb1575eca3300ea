import type { Bucket } from './bucket.js';
import { BucketTable } from './bucket-table.js';
import { BUDGET } from './budget-settings.js';
import {
  type BudgetView,
  errorOutcome,
  NOTHING_SENT,
  type PlaceWrite,
  okOutcome,
  PRIORITY_RANK,
  type SchedulerOptions,
  type WriteGrant,
  type ScheduledWriteOptions,
  type WriteOutcome,
  type WritePriority,
  type WriteScheduler,
  unusedOutcome,
} from './write-scheduler.js';
import {
  type BucketRef,
  type Clock,
  PlatformRateLimitedError,
  type RateLimitInfo,
  type WriteResult,
} from '../ports.js';

export { shareOf, type WriteGrant, type WriteOutcome, type WritePriority } from './write-scheduler.js';

const EDIT_RANK = PRIORITY_RANK.edit;
/** Edits leave what reserved finals need within this long; weighFinal and canAffordFinal ask it. */
const FINAL_HORIZON_MS = BUDGET.finalHorizonMs;

// One rate-limit scheduler for every platform write of every reply.
//
// Each bucket (bucket.ts) is a token bucket whose numbers are learned (learning.ts: the connector's
// limit per window is a first guess, 429s shrink it, quiet pressure grows it, probes look for a
// larger burst) or follow the platform's headers. A 429 is the bucket's the platform names (else the
// write's first), or, by the evidence, the write's place's (place-blame.ts). Every write's outcome
// comes back through its grant's done(): accepted (with headers), refused (429) or failed.
//
// Waiters are served by priority (final > first > edit > notice), and within a priority in turn by
// party, the user whose reply it is (fairOrder): the i-th waiting write of every party before the
// (i+1)-th of any, the party served longest ago first, FIFO within a party. Live replies reserve their
// final's budget, so intermediate edits and notices never spend what the finals need.
//
// Several replicas: each spends `share` of every bucket (setShare, shareOf), and what one learns
// reaches the others through the store (sync, bucket-table.ts).

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
  /** Party → the serial of its last grant, and when that was (forgotten after partyForgetMs). */
  private readonly served = new Map<string, { serial: number; at: number }>();
  private serial = 0;
  private lastPartySweep = 0;
  private seq = 0;
  private timer: { clear(): void; at: number } | undefined;
  private readonly onShareChange: (share: number) => void;

  constructor(opts: SchedulerOptions) {
    this.clock = opts.clock;
    this.buckets = new BucketTable({
      marginMs: opts.marginMs,
      forgetAfterMs: opts.forgetAfterMs ?? BUDGET.forgetAfterMs,
      store: opts.store,
      saveEveryMs: opts.saveEveryMs ?? BUDGET.saveEveryMs,
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
   * `remaining` counts of headers. The caller sets 1 / the live replicas whenever that count
   * changes (shareOf).
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
   * Merge what other replicas learned (the stored lesson with the newer updatedAt wins). The caller
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
    const states = this.advance(buckets, now);
    const rank = PRIORITY_RANK[priority];
    // Fast path without a timer hop: nobody queued for these buckets and all have budget.
    if (
      !this.waiters.some((w) => sharesBucket(w.buckets, buckets)) &&
      states.every((s) => s.readiness(now, rank >= EDIT_RANK, FINAL_HORIZON_MS).at <= now)
    ) {
      this.servedParty(party, now);
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

  async write<T extends WriteResult | void | typeof NOTHING_SENT>(
    buckets: readonly BucketRef[],
    priority: WritePriority,
    send: () => Promise<T>,
    opts: ScheduledWriteOptions = {},
  ): Promise<T> {
    const attempts = Math.max(1, opts.attempts ?? 3);
    for (let attempt = 1; ; attempt++) {
      const grant = await this.acquire(buckets, priority, opts.signal, opts.party);
      try {
        const result = await send();
        grant.done(result === NOTHING_SENT ? unusedOutcome : okOutcome(result));
        return result;
      } catch (err) {
        grant.done(errorOutcome(err));
        // The bucket backs off (the grant's done); the write goes again on a new grant.
        if (!(err instanceof PlatformRateLimitedError) || attempt >= attempts) throw err;
      }
    }
  }

  /** Out-of-band headers (an SDK's response event): as if they came with a write's answer. */
  observe(info: RateLimitInfo): void {
    // Out of band, the write these headers answer is usually one of ours still in flight, already
    // counted by the platform. A bucket we never wrote to has nothing to correct.
    this.buckets.get(info.bucket)?.observe(info, this.clock.now(), 1);
    this.serve();
  }

  /**
   * An out-of-band 429 (a call that was no granted write): the bucket is blocked and paced after,
   * but learns nothing, since the write it refused was not ours to count.
   */
  limited(bucket: string, retryAfterMs: number): void {
    this.buckets.limited(bucket, retryAfterMs, this.clock.now());
    this.serve();
  }

  reserve(buckets: readonly BucketRef[]): () => void {
    const now = this.clock.now();
    const releases = buckets.map((b) => this.buckets.bucket(b, now).reserve());
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const release of releases) release();
      this.serve();
    };
  }

  /**
   * The last writes this replica made in a place's per-place buckets (BucketRef.perPlace), to hand
   * the place over to the replica that answers there next.
   */
  placeWrites(buckets: readonly BucketRef[]): PlaceWrite[] {
    return this.buckets.placeWrites(buckets);
  }

  /** Another replica answered in a place last: its writes there count in this replica's buckets. */
  handOver(writes: readonly PlaceWrite[]): void {
    this.buckets.handOver(writes, this.clock.now());
    this.serve();
  }

  weighFinal(buckets: readonly BucketRef[]): void {
    const now = this.clock.now();
    for (const ref of buckets) {
      const [s] = this.advance([ref], now) as [Bucket];
      const a = s.affords(now, FINAL_HORIZON_MS, 1);
      // A reply posts once for want of this budget: room would be used (what makes a probe look).
      if (a.short) s.wanted(now);
      if (!a.ok) return; // the reply posts once: the buckets after this one are not its concern
    }
  }

  canAffordFinal(buckets: readonly BucketRef[]): boolean {
    const now = this.clock.now();
    // A bucket not made yet would start full, with no final reserved: it affords one.
    return buckets.every((ref) => this.buckets.get(ref.key)?.affords(now, FINAL_HORIZON_MS, 1).ok ?? true);
  }

  stats(): { buckets: number; waiting: number } {
    return { buckets: this.buckets.size, waiting: this.waiters.length };
  }

  /**
   * A bucket's current numbers, for tests and metrics; undefined if not known. `perMinute` and
   * `burst` are the whole platform's bucket; `mine` is this replica's share of it.
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

  /** The buckets of `refs` brought up to `now` (made on first use). */
  private advance(refs: readonly BucketRef[], now: number): Bucket[] {
    return refs.map((ref) => {
      const b = this.buckets.bucket(ref, now);
      b.advance(now);
      return b;
    });
  }

  /** Grant a write in every bucket; its done() reports what the platform said. */
  private grantAll(states: readonly Bucket[], at: number): WriteGrant {
    for (const s of states) s.grant(at);
    let settled = false;
    return {
      done: (outcome: WriteOutcome = { ok: true }) => {
        if (settled) return;
        settled = true;
        this.buckets.answered(states, at, outcome, this.clock.now());
        this.serve();
      },
    };
  }

  /**
   * Grant every waiter that can go, in priority order and round-robin by party. A waiter that cannot go
   * reserves its buckets (for the budget it waits for); waiting for its place's limit only, only those.
   */
  private serve(): void {
    const now = this.clock.now();
    const reserved = new Set<string>();
    let nextAt = Number.POSITIVE_INFINITY;
    const granted = new Map<Waiter, WriteGrant>();
    for (const w of this.fairOrder()) {
      if (w.buckets.some((b) => reserved.has(b.key))) continue;
      const states = this.advance(w.buckets, now);
      const ready = states.map((s) => {
        const r = s.readiness(now, w.rank >= EDIT_RANK, FINAL_HORIZON_MS);
        if (r.short) s.pressed(); // a write waits for its tokens: demand, what lets it grow
        return r.at;
      });
      const at = Math.max(0, ...ready);
      if (at <= now) {
        this.servedParty(w.party, now);
        granted.set(w, this.grantAll(states, now));
      } else {
        const onlyPlace = states.every((s, i) => (ready[i] as number) <= now || s.placeOf !== undefined);
        for (const [i, b] of w.buckets.entries()) if (!onlyPlace || (ready[i] as number) > now) reserved.add(b.key);
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
   * The waiters in the order to serve them: by rank, then the i-th of every party before the
   * (i+1)-th of any, the party served longest ago first, then arrival. A write with no party is a
   * party of its own (plain FIFO within a priority).
   */
  private fairOrder(): readonly Waiter[] {
    if (!this.waiters.some((w) => w.party !== undefined)) return this.waiters;
    const rounds = new Map<string, number>();
    const keyed = this.waiters.map((w) => {
      if (w.party === undefined) return { w, round: 0, last: -1 };
      const key = `${w.rank}\u0000${w.party}`;
      const round = rounds.get(key) ?? 0;
      rounds.set(key, round + 1);
      return { w, round, last: this.served.get(w.party)?.serial ?? -1 };
    });
    keyed.sort((a, b) => a.w.rank - b.w.rank || a.round - b.round || a.last - b.last || a.w.seq - b.w.seq);
    return keyed.map((k) => k.w);
  }

  /** A write of `party` was granted (parties not served for partyForgetMs are forgotten). */
  private servedParty(party: string | undefined, now: number): void {
    if (party === undefined) return;
    this.served.delete(party);
    this.served.set(party, { serial: this.serial++, at: now });
    if (now - this.lastPartySweep < BUDGET.partyForgetMs) return;
    this.lastPartySweep = now;
    // Oldest first (re-inserted on every grant): stop at the first one still remembered.
    for (const [p, { at }] of this.served) {
      if (at > now - BUDGET.partyForgetMs) break;
      this.served.delete(p);
    }
  }

  /** Parties the fair order remembers (tests: memory stays bounded). */
  get partiesRemembered(): number {
    return this.served.size;
  }

  /**
   * Posts (not edits) left waiting, counted per bucket: several at once in one bucket is demand for
   * a burst (Bucket.postsWaited). One alone is a place's next reply after its last, which a larger
   * burst would not serve.
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

/** Insert `w` into `list`, kept sorted by (rank, seq). */
function insertByRank(list: Waiter[], w: Waiter): void {
  let i = list.length;
  while (i > 0) {
    const prev = list[i - 1] as Waiter;
    if (prev.rank < w.rank || (prev.rank === w.rank && prev.seq < w.seq)) break;
    i--;
  }
  list.splice(i, 0, w);
}
