import type { LearnedBudget, RateLimitInfo } from '../ports.js';
import {
  LearnedNumbers,
  LONG_WINDOW_MS,
  MAX_GROWTH,
  MINUTE,
  type NumbersInit,
  RECENT_LIMIT_MS,
} from './learned-numbers.js';

export { MINUTE } from './learned-numbers.js';

// One bucket's budget as a learned token bucket: a sustained rate and a burst.
//
// Platforms publish little ("50+ per minute, short bursts allowed"); the algorithm and the burst
// behind it are unknown. The connector's limit per window is a first guess, turned into a token
// bucket that can never put more than `limit` writes in any window: burst b and rate
// (limit - b + 1) per window (+ margin), which is safe against fixed, sliding and token limits.
// Per-minute buckets start with a modest burst, short ones with none.
//
// A 429 is evidence: the bucket shrinks to what the platform actually accepted (at most 0.7x,
// never below one write per window) and is paced after the block; while no 429 comes and writes
// wait for budget it grows back (+5% a minute, or one write per window below the default; never
// above 2x the default, and for 10 minutes never above 90% of the rate that met the 429). A bucket whose
// platform sends headers (limit, remaining, reset) follows them instead of guessing. Upward, a
// per-minute bucket probes for room it was never refused (probeUp, learned-numbers.ts).
//
// Several replicas: the numbers are the whole platform's bucket (learned-numbers.ts); this replica's
// tokens are its share of it.

/** After a 429 the rate is at most this fraction of what it was. */
const SHRINK = 0.7;
/** An estimate from accepted writes is discounted by this much (ours are never exact). */
const SAFETY = 0.9;
const GROWTH = 1.05;

export interface ModelInit extends NumbersInit {
  now: number;
}

export class BudgetModel extends LearnedNumbers {
  private tokens: number;
  /** Tokens are valued at this time; in the future while a block lasts (no refill during it). */
  private last: number;
  blockedUntil = 0;
  /** From headers: at most `remaining` more grants until `until`. */
  allowance: { remaining: number; until: number } | undefined;
  /**
   * Writes granted here and not answered yet. A `remaining` header counts only what the platform
   * has seen: the writes still on their way will spend from it too.
   */
  inFlight = 0;
  /** From headers: the platform's bucket is full again at this time (its window resets). */
  private resetAt: number | undefined;
  /** Final writes that live replies will need here (see WriteScheduler.hold). */
  held = 0;
  lastActivity: number;
  /** When a probe was last refused: the block that follows ends with what it refilled (block). */
  private probeRefusedAt = Number.NaN;
  private growthCheckAt: number;
  /** Some write waited for this bucket's tokens since the last growth check (demand is there). */
  private pressed = false;

  constructor(init: ModelInit) {
    super(init);
    this.tokens = this.myBurst;
    this.last = init.now;
    this.lastActivity = init.now;
    this.growthCheckAt = init.now;
  }

  /**
   * The replicas changed: from now on this replica spends `share` of the bucket. What it has in
   * hand is rescaled with it (a replica that joins takes part of the others' tokens, not more).
   */
  setShare(share: number, now: number): void {
    if (share === this.share || this.perPlace) return;
    this.refill(now);
    const ratio = share / this.share;
    this.share = share;
    this.tokens = Math.min(this.myBurst, this.tokens * ratio);
    if (this.allowance !== undefined) this.allowance.remaining = Math.floor(this.allowance.remaining * ratio);
  }

  /** A provisional bucket meets its real budget. */
  reconfigure(limit: number, windowMs: number, marginMs: number, now: number): void {
    this.provisional = false;
    this.limit = Math.max(1, limit);
    this.windowMs = Math.max(1, windowMs);
    this.marginMs = marginMs;
    this.refill(now);
    const d = this.defaults();
    this.rate = d.rate;
    this.burst = d.burst;
    this.confirmedBurst = d.burst;
    this.tokens = Math.min(this.tokens, this.myBurst);
  }

  /**
   * Restore what was learned before (a restart, a bucket forgotten while idle, or a newer lesson
   * of another replica).
   */
  applyLearned(l: LearnedBudget, now: number): void {
    this.restore(l);
    // A bucket that has not written yet starts full of what was learned (as it starts full of
    // the first guess); one in use keeps what it has, within the new burst.
    this.tokens = this.lastGrantAt === undefined ? this.myBurst : Math.min(this.tokens, this.myBurst);
    this.growthCheckAt = now;
  }

  private refill(now: number): void {
    if (now <= this.last) return;
    this.tokens = Math.min(this.myBurst, this.tokens + (now - this.last) * this.myRate);
    this.last = now;
    if (this.resetAt !== undefined && now >= this.resetAt) {
      this.tokens = this.myBurst;
      this.resetAt = undefined;
    }
  }

  /** Bring tokens and growth up to `now`. */
  refresh(now: number): void {
    this.refill(now);
    if (now - this.growthCheckAt < MINUTE) return;
    const quiet = now - this.lastLimitedAt >= MINUTE;
    if (this.pressed && quiet) this.grow(now);
    this.pressed = false;
    this.growthCheckAt = now;
  }

  private grow(now: number): void {
    const d = this.defaults();
    const recent = now - this.lastShrinkAt < RECENT_LIMIT_MS;
    // A short window's rate is the platform's published one ("one a second"): its room is in the
    // burst (probed in a family), not in a faster rate that every fixed window would refuse.
    let cap = this.windowMs < LONG_WINDOW_MS ? d.rate : d.rate * MAX_GROWTH;
    if (recent) cap = Math.min(cap, SAFETY * this.rateAt429);
    if (this.rate < cap) {
      // Below the default it may climb by a write per window a minute (a deep cut recovers in
      // minutes, not hours); above it only by 5%, so that 90% of a rate that met a 429 is below
      // the platform's limit again.
      const step = this.rate < d.rate ? Math.min(d.rate, this.rate + this.floorRate) : 0;
      this.rate = Math.min(cap, Math.max(this.rate * GROWTH, step));
      this.proven = false; // the new rate is a guess again
      this.changed(now);
    }
    // The burst only grows back once the 429 is old: a platform with a smaller burst than ours
    // would otherwise refuse the same burst again.
    if (!recent && this.burst < d.burst) {
      this.burst += 1;
      this.confirmedBurst = this.burst;
      this.changed(now);
    }
  }

  /**
   * The earliest time a write may be granted here. An intermediate edit (isEdit) leaves the
   * budget that live replies' finals need: after it, the tokens left plus what refills within
   * `horizonMs` must still pay every held final.
   */
  readyAt(now: number, isEdit: boolean, horizonMs: number): number {
    this.refresh(now);
    if (this.dropStaleProbe(now)) this.tokens = Math.min(this.tokens, this.myBurst);
    let at = this.blockedUntil;
    const keep = isEdit ? this.held : 0;
    if (this.allowance !== undefined) {
      if (now >= this.allowance.until) this.allowance = undefined;
      else if (this.allowance.remaining <= keep) at = Math.max(at, this.allowance.until);
    }
    const need = isEdit ? this.editNeed(horizonMs) : 1;
    if (need > this.myBurst || this.probeInFlight(this.tokens, this.inFlight)) {
      this.pressed = true;
      return Number.POSITIVE_INFINITY; // until a hold is released, or the probe is answered
    }
    if (this.tokens < need) {
      let t = Math.max(now, this.last) + Math.ceil((need - this.tokens) / this.myRate);
      if (this.resetAt !== undefined) t = Math.min(t, Math.max(now, this.resetAt));
      if (t > now) this.pressed = true;
      at = Math.max(at, t);
    } else if (this.last > now) {
      at = Math.max(at, this.last);
    }
    return at;
  }

  /**
   * Tokens an intermediate edit needs in hand. While the burst can keep every held final in hand,
   * it does: a final then leaves the moment its reply ends, not a refill later. Beyond that the
   * finals are paid within the horizon (tokens now plus what refills meanwhile); more than the
   * burst is never asked (infinite: edits wait until a hold is released).
   */
  private editNeed(horizonMs: number): number {
    // An edit never spends the unconfirmed part of a probed burst: that is for finals and posts.
    const all = this.held + 1 + (this.myBurst - this.myConfirmedBurst);
    const burst = this.myBurst;
    if (all <= burst) return all;
    // A per-minute rate is a guess ("50+ a minute, short bursts allowed") and is not counted on
    // until a 429, a header or a window's worth of accepted writes confirms it: the platform may
    // refill far slower (a workspace at 20 a minute when we guess 50), and an edit paid by refill
    // that never comes would leave a final to meet the 429. (A short window is paced at its rate
    // from the start: counted.)
    if (!this.rateCounted()) return Number.POSITIVE_INFINITY;
    const withRefill = all - this.myRate * horizonMs;
    return withRefill > burst ? withRefill : Math.max(1, burst);
  }

  /** Can this bucket pay `extra` more writes beyond the held finals within the horizon? */
  affords(now: number, horizonMs: number, extra: number): boolean {
    this.refresh(now);
    const until = now + horizonMs;
    if (this.blockedUntil > until) return false;
    const need = this.held + extra;
    if (this.allowance !== undefined && now < this.allowance.until && this.allowance.until > until) {
      if (this.allowance.remaining < need) return false;
    }
    // Over the horizon the bucket pays what it has plus what refills meanwhile (the burst caps
    // what it holds at one instant, not what it pays over time: a bot's 50 a second pays a
    // hundred finals within 2 s). A per-minute rate not yet confirmed pays nothing ahead (see
    // editNeed): only the tokens in hand.
    const from = Math.max(now, this.last);
    const refill = this.rateCounted() && until > from ? (until - from) * this.myRate : 0;
    if (this.tokens + refill >= need) return true;
    this.wanted(now); // a reply posts once for want of this budget: room would be used
    return false;
  }

  /** When this replica last spent a token here, as of its answer once answered (handover). */
  lastGrantAt: number | undefined;

  /**
   * Another replica wrote here last, at `at` (a place handed over): whatever this replica thought
   * it had, the bucket was empty then and has only refilled since.
   */
  spentAt(at: number, now: number): void {
    this.refill(now);
    // The other replica's write may have reached the platform up to a margin after it saw it.
    this.tokens = Math.min(this.tokens, Math.max(0, now - at - this.marginMs) * this.myRate);
    this.lastActivity = Math.max(this.lastActivity, Math.min(at, now));
  }

  grant(now: number): void {
    // A write on a raised burst is the family's one probe out until it is answered.
    if (this.probingUp) this.probeLock.take(this.key, now);
    this.lastGrantAt = now;
    this.inFlight++;
    this.refill(now);
    this.lastActivity = now;
    this.tokens -= 1;
    if (this.tokens < 1) this.pressed = true;
    if (this.allowance !== undefined) this.allowance.remaining--;
  }

  /**
   * The platform accepted the write. It counted it somewhere between the grant and now (under load
   * a request can reach it hundreds of ms late, the next one less late): so the write's token
   * refills from the answer, not the grant.
   */
  accept(now: number): void {
    this.lastActivity = now;
    this.lastGrantAt = now; // handed over as of the answer, for the same reason
    const span = this.windowMs + this.marginMs;
    this.accepted.add(now, now - span, 4 * this.limit + 16);
    // The platform took a window's worth at the rate we assume: that rate is no longer a guess.
    if (!this.proven && this.accepted.since(now - span) >= SAFETY * this.myRate * span) this.proven = true;
    if (now < this.last) return;
    this.refill(now);
    this.tokens = Math.min(this.tokens, this.myBurst - 1);
    this.tokens += this.probeUp(now);
  }

  /** A granted write was answered (whatever the answer): it is no longer on its way. */
  settle(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
  }

  /** The write was refused (or the refusal was another bucket's): its token was not spent. */
  refund(): void {
    this.tokens = Math.min(this.myBurst, this.tokens + 1);
    if (this.allowance !== undefined) this.allowance.remaining++;
  }

  /**
   * A 429 that blames this bucket. The first after a change of the model shrinks it; one for a
   * write granted before the last shrink was sent under the old model and only extends the block.
   * Returns whether the model shrank.
   */
  learn(now: number, grantedAt: number): boolean {
    this.lastLimitedAt = now;
    if (grantedAt <= this.lastShrinkAt) return false;
    this.refill(now);
    const span = this.windowMs + this.marginMs;
    // What the platform accepted over the last window. (Not "since its previous 429": in a storm
    // of 429s nothing is accepted between them, and that would cut the rate to the floor.) This
    // replica saw only its own writes; the others, each spending its share, wrote about as many.
    const mine = this.accepted.since(now - span);
    const accepted = this.share === 1 ? mine : mine / this.share;
    const estimate = (SAFETY * accepted) / span;
    if (this.probeRefused(now)) {
      this.tokens = 0; // the platform's bucket is empty now
      this.probeRefusedAt = now;
      return true;
    }
    this.rateAt429 = this.rate;
    // Fewer accepted than one burst is no evidence of the rate (a 429 storm right at the start,
    // a bucket shared with someone else): then only the multiplicative cut.
    const cut = accepted > this.burst ? Math.min(this.rate * SHRINK, estimate) : this.rate * SHRINK;
    this.rate = Math.max(this.floorRate, cut);
    this.burst = Math.max(1, Math.min(Math.floor(this.burst / 2), Math.floor(accepted)));
    this.confirmedBurst = this.burst;
    this.tokens = Math.min(this.tokens, this.myBurst);
    this.lastShrinkAt = now;
    this.growthCheckAt = now;
    this.changed(now);
    return true;
  }

  /**
   * The platform refused writes for `retryAfterMs`. When the block ends one write may go and the
   * rest are paced at the sustained rate: never every waiter at once (but see a refused probe).
   */
  block(now: number, retryAfterMs: number): void {
    this.refill(now);
    const end = now + retryAfterMs + this.marginMs;
    this.blockedUntil = Math.max(this.blockedUntil, end);
    this.lastActivity = now;
    const at = Math.max(end, this.last);
    const refilled = Math.min(this.myBurst, this.tokens + (at - this.last) * this.myRate);
    // After a refused probe the platform's bucket is known to have been empty at the refusal, and
    // it refills through the block: the stranded finals go with what refilled (within the
    // confirmed burst), not one by one behind the block. Any other 429 says nothing of the
    // platform's bucket: one write first.
    this.tokens = this.probeRefusedAt === now ? refilled : Math.min(1, refilled);
    this.last = at;
  }

  /**
   * Headers from a write's answer (or an SDK's event). `answered`: how many of the writes still
   * in flight these headers may already count (1 for an SDK's response event, which comes before
   * the write's own answer; 0 for the answer itself, whose grant is already settled).
   */
  observe(info: RateLimitInfo, now: number, answered = 0): void {
    if (info.resetAfterMs !== undefined && info.resetAfterMs > this.windowMs) this.windowMs = info.resetAfterMs;
    if (info.limit !== undefined && info.limit > 0 && (!this.headers || info.limit !== this.limit)) {
      this.refill(now);
      this.headers = true;
      this.limit = info.limit;
      const d = this.defaults();
      this.rate = d.rate;
      this.burst = d.burst;
      this.confirmedBurst = d.burst;
      this.tokens = Math.min(this.tokens, this.myBurst);
    }
    if (info.remaining !== undefined && info.resetAfterMs !== undefined) {
      const until = now + info.resetAfterMs + this.marginMs;
      // What the platform has left (counted for the whole bot or workspace: this replica's share
      // of it), less what we already granted and it has not counted yet.
      const remaining = this.myPart(info.remaining) - Math.max(0, this.inFlight - answered);
      if (remaining <= 0) this.blockedUntil = Math.max(this.blockedUntil, until);
      else this.allowance = { remaining, until };
      // With the platform's own limit known, its count is ours, and its bucket is full again at
      // the reset.
      if (this.headers) {
        this.refill(now);
        if (now >= this.last) this.tokens = Math.min(this.myBurst, Math.max(0, remaining));
        this.resetAt = until;
      }
    }
    this.lastActivity = now;
  }

  /** Idle long enough that its runtime state says nothing (learned numbers are kept elsewhere). */
  forgettable(now: number, forgetAfterMs: number): boolean {
    if (this.held > 0) return false;
    const quietSince = Math.max(this.lastActivity, this.blockedUntil, this.allowance?.until ?? 0, this.last);
    return now - quietSince >= forgetAfterMs;
  }

  /**
   * Whether forgetting this bucket now loses nothing a new one would not have: nothing held or in
   * flight, no block, allowance or probe out, quiet for a whole window (its accepted writes are
   * past) and at least `restMs`, and full again. A bucket made anew from its lesson starts full
   * with the same numbers. (Per-place buckets are dropped this way: one per channel or thread
   * would otherwise stay for forgetAfterMs, and a busy install opens thousands of places a minute.)
   */
  atRest(now: number, restMs: number): boolean {
    // Refill first: it clears a platform reset (resetAt) that has passed. Checked before it, a
    // bucket that ever read rate-limit headers (every Discord thread) was never at rest and stayed
    // for forgetAfterMs, 10 minutes of new places (issue 31).
    this.refill(now);
    if (this.held > 0 || this.inFlight > 0 || this.probingUp || this.resetAt !== undefined) return false;
    if (now < this.blockedUntil || (this.allowance !== undefined && now < this.allowance.until)) return false;
    if (now - this.lastActivity < Math.max(restMs, this.windowMs + this.marginMs)) return false;
    return this.tokens >= this.myBurst;
  }
}
