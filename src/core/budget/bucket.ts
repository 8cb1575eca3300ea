import type { Lesson, RateLimitInfo } from '../ports.js';
import type { BucketMode, Numbers } from './bucket-mode.js';
import * as learn from './learning.js';
import { BUDGET } from './budget-settings.js';
import { followHeaders, HEADER_MODE, type HeaderBucket } from './header-bucket.js';
import { LEARNED_MODE, type Learned, type Reference } from './learning.js';
import {
  isUnlimited,
  PLACE_MODE,
  placeCleared,
  placeLimit,
  placeMarginMs,
  restorePlace,
  unlimited,
} from './place-blame.js';
import type { ProbeLock } from './probe-lock.js';
import { refill, replay, type Tokens, tokensReadyAt } from './tokens.js';
import type { BudgetView } from './write-scheduler.js';

// One bucket's budget and the object that owns it. Its parts are plain values replaced by pure
// functions: the token bucket (below), the learned numbers (learning.ts) and the header bucket (header-bucket.ts).
// What the numbers mean is its mode's (bucket-mode.ts: learned, header-followed, place-blamed),
// picked from those values (modeOf): the Bucket delegates to it.
// Queries (readiness, affords, atRest, …) only read; changes are this object's commands. The
// numbers are the whole platform's bucket; this replica spends `share` of it (tokens are its own).

/** A mode over what this bucket keeps: its learned numbers and its header bucket. */
type Mode = BucketMode<Learned, HeaderBucket>;

/** `perPlace`, `family`: the BucketRef's; `lock`: its family's, or one of its own. */
export interface BucketInit extends Reference {
  key: string;
  now: number;
  share: number;
  perPlace?: boolean;
  lock: ProbeLock;
  family?: string | undefined;
  provisional?: boolean;
  /** BucketRef.placeOf: a place's share of that wider bucket (place-blame.ts). */
  placeOf?: string | undefined;
}

export class Bucket {
  readonly key: string;
  readonly perPlace: boolean;
  readonly placeOf: string | undefined;
  /** Its lessons are kept (and shared) under this key: its family's, else its own. */
  readonly lessonKey: string;
  private readonly lock: ProbeLock;
  private share: number;
  private s: Learned;
  private headers: HeaderBucket | undefined;
  private tokens: Tokens;
  private blockedUntil = 0;
  /** Writes granted and not answered yet (a `remaining` header has not counted them). */
  private inFlight = 0;
  /** Final writes that live replies will need here (WriteScheduler.reserve). */
  private reserved = 0;
  private lastActivity: number;
  private probeRefusedAt = Number.NaN;
  private savedAt = Number.NEGATIVE_INFINITY;
  /** When this replica last spent a token here, as of its answer once answered (handover). */
  private grantedAt: number | undefined;

  constructor(init: BucketInit) {
    this.key = init.key;
    this.perPlace = init.perPlace ?? false;
    this.placeOf = init.placeOf;
    this.lessonKey = init.family ?? init.key;
    this.lock = init.lock;
    this.share = this.perPlace ? 1 : init.share;
    this.s = learn.startLearning(init, init.now, init.family !== undefined, init.provisional);
    if (this.placeOf !== undefined) this.s = unlimited(this.s); // until a 429 is blamed on its place
    this.tokens = { tokens: this.myBurst, at: init.now };
    this.lastActivity = init.now;
  }

  /** The mode its values put it in now (a read: the values change, the mode with them). */
  private get mode(): Mode {
    return modeOf(this.s, this.headers, this.placeOf !== undefined);
  }

  /** The whole platform's numbers, as its mode has them. */
  private get numbers(): Numbers {
    return this.mode.numbers(this.s, this.headers);
  }

  /** This replica's part of a whole-platform count (at least `least`). */
  private mine(n: number, least = 1): number {
    return this.share === 1 ? n : Math.max(least, Math.floor(n * this.share));
  }

  get myRate(): number {
    return this.numbers.rate * this.share;
  }

  get myBurst(): number {
    return this.mine(this.numbers.burst);
  }

  private get myConfirmedBurst(): number {
    return this.mine(this.numbers.confirmedBurst);
  }

  get probingUp(): boolean {
    return this.mode.probingUp(this.s);
  }

  get lastGrantAt(): number | undefined {
    return this.grantedAt;
  }

  /** What is learned (a plain value: reading it changes nothing). */
  get learned(): Learned {
    return this.s;
  }

  private rateCounted(): boolean {
    return this.mode.rateCounted(this.s);
  }

  /** Tokens as of `now` (full at the headers' reset, then no reset ahead): a read, nothing kept. */
  private at(now: number): { t: Tokens; resetAt: number | undefined } {
    const resetAt = this.headers?.resetAt;
    if (now <= this.tokens.at) return { t: this.tokens, resetAt };
    const t = refill(this.tokens, this.myRate, this.myBurst, now);
    if (resetAt !== undefined && now >= resetAt) return { t: { tokens: this.myBurst, at: now }, resetAt: undefined };
    return { t, resetAt };
  }

  private refillTo(now: number): void {
    const { t, resetAt } = this.at(now);
    this.tokens = t;
    if (this.headers !== undefined && resetAt !== this.headers.resetAt) this.headers = { ...this.headers, resetAt };
  }

  private setTokens(tokens: number): void {
    this.tokens = { tokens, at: this.tokens.at };
  }

  private allow(change: (remaining: number) => number): void {
    const a = this.headers?.allowance;
    if (this.headers === undefined || a === undefined) return;
    this.headers = { ...this.headers, allowance: { remaining: change(a.remaining), until: a.until } };
  }

  /** The earliest grant here, and whether it waits for tokens; an edit leaves reserved finals' budget. */
  readiness(now: number, isEdit: boolean, horizonMs: number): { at: number; short: boolean } {
    const { t, resetAt } = this.at(now);
    let at = this.blockedUntil;
    const a = this.headers?.allowance;
    if (a !== undefined && now < a.until && a.remaining <= (isEdit ? this.reserved : 0)) at = Math.max(at, a.until);
    const need = isEdit ? this.editNeed(horizonMs) : 1;
    const never = need > this.myBurst || this.probeInFlight(t.tokens); // until a release, or the probe's answer
    if (never) return { at: Number.POSITIVE_INFINITY, short: true };
    let ready = tokensReadyAt(t, this.myRate, need, now);
    if (t.tokens < need && resetAt !== undefined) ready = Math.min(ready, Math.max(now, resetAt));
    return { at: Math.max(at, ready), short: t.tokens < need && ready > now };
  }

  /**
   * Tokens an edit needs in hand: every reserved final while the burst can keep them (a final then
   * leaves the moment its reply ends), else what the horizon's refill leaves, never over the burst;
   * never the unconfirmed part of a probed burst. A per-minute rate not yet confirmed (a 429, a
   * header, a proven window) is not counted on: refill that never comes would leave a final to 429.
   */
  private editNeed(horizonMs: number): number {
    const all = this.reserved + 1 + (this.myBurst - this.myConfirmedBurst);
    const burst = this.myBurst;
    if (all <= burst) return all;
    if (!this.rateCounted()) return Number.POSITIVE_INFINITY;
    const withRefill = all - this.myRate * horizonMs;
    return withRefill > burst ? withRefill : Math.max(1, burst);
  }

  /** Beyond the confirmed burst, one at a time: a probe past the room meets one 429, not many. */
  private probeInFlight(tokens: number): boolean {
    const unconfirmed = this.myBurst - this.myConfirmedBurst;
    return unconfirmed > 0 && this.inFlight > 0 && tokens - 1 < unconfirmed;
  }

  /**
   * Can it pay `extra` writes beyond the reserved finals within the horizon (tokens in hand plus a
   * counted rate's refill)? `short`: not for want of tokens (then room would be used: `wanted`).
   */
  affords(now: number, horizonMs: number, extra: number): { ok: boolean; short: boolean } {
    const until = now + horizonMs;
    if (this.blockedUntil > until) return { ok: false, short: false };
    const need = this.reserved + extra;
    const a = this.headers?.allowance;
    if (a !== undefined && now < a.until && a.until > until && a.remaining < need) return { ok: false, short: false };
    const { t } = this.at(now);
    const from = Math.max(now, t.at);
    const refilled = this.rateCounted() && until > from ? (until - from) * this.myRate : 0;
    const ok = t.tokens + refilled >= need;
    return { ok, short: !ok };
  }

  /** Idle long enough that its runtime state says nothing (its lesson is kept elsewhere). */
  forgettable(now: number, forgetAfterMs: number): boolean {
    if (this.reserved > 0) return false;
    const until = this.headers?.allowance?.until ?? 0;
    return now - Math.max(this.lastActivity, this.blockedUntil, until, this.tokens.at) >= forgetAfterMs;
  }

  /** Nothing a new one made from its lesson lacks: nothing reserved or out, quiet (`restMs`), full. */
  atRest(now: number, restMs: number): boolean {
    // A reset that has passed counts as done, or a bucket that read headers never rests (issue 31).
    const { t, resetAt } = this.at(now);
    if (this.reserved > 0 || this.inFlight > 0 || this.probingUp || resetAt !== undefined) return false;
    const a = this.headers?.allowance;
    if (now < this.blockedUntil || (a !== undefined && now < a.until)) return false;
    if (now - this.lastActivity < Math.max(restMs, this.s.windowMs + this.s.marginMs)) return false;
    return t.tokens >= this.myBurst;
  }

  view(): BudgetView {
    const { rate, burst } = this.numbers;
    const mine = { perMinute: this.myRate * BUDGET.minute, burst: this.myBurst };
    const learned = Number.isFinite(this.s.lastShrinkAt);
    return { perMinute: rate * BUDGET.minute, burst, mine, blockedUntil: this.blockedUntil, learned };
  }

  /** Time passed: tokens refill, a minute of demand grows the numbers, a stale probe is dropped. */
  advance(now: number): void {
    this.refillTo(now);
    this.s = learn.grow(this.s, now);
    if (this.probingUp && !this.lock.mayProbe(this.key, now)) {
      // Another member took the family's lock: two probes out at once would meet two 429s.
      this.s = learn.dropProbe(this.s);
      this.setTokens(Math.min(this.tokens.tokens, this.myBurst));
    }
  }

  /** A write waited for this bucket's tokens (demand: what lets it grow). */
  pressed(): void {
    this.s = learn.pressed(this.s);
  }

  /** A reply goes post-once for want of this budget (room would be used: what makes it probe). */
  wanted(now: number): void {
    this.s = learn.wanted(this.s, now);
  }

  postsWaited(now: number): void {
    this.s = learn.postsWaited(this.s, now);
  }

  /** A live reply will need one final write here (WriteScheduler.reserve); returns the release. */
  reserve(): () => void {
    this.reserved++;
    return () => void (this.reserved = Math.max(0, this.reserved - 1));
  }

  /** The replicas changed: what this one has in hand is rescaled with its share. */
  setShare(share: number, now: number): void {
    if (share === this.share || this.perPlace) return;
    this.refillTo(now);
    const ratio = share / this.share;
    this.share = share;
    this.setTokens(Math.min(this.myBurst, this.tokens.tokens * ratio));
    this.allow((r) => Math.floor(r * ratio));
  }

  /** A provisional bucket meets its real budget. */
  reconfigure(r: Reference, now: number): void {
    this.refillTo(now);
    this.s = learn.reconfigured(this.s, r);
    this.setTokens(Math.min(this.tokens.tokens, this.myBurst));
  }

  /** A lesson replaces the numbers: a bucket that never wrote starts full; a place so far unlimited, at what its writes left. */
  applyLesson(l: Lesson, now: number): void {
    const was = this.s;
    const wasMode = this.mode;
    this.s = restorePlace(was, l, now);
    if (wasMode.limitsNothing || this.mode.limitsNothing)
      return void (this.tokens = replay(was.accepted, this.myRate, this.myBurst, now));
    this.setTokens(this.grantedAt === undefined ? this.myBurst : Math.min(this.tokens.tokens, this.myBurst));
  }

  /** The lesson, if it changed and is due (every `everyMs`, or forced); it counts as saved. */
  takeLesson(now: number, everyMs: number, force: boolean): Lesson | undefined {
    if (!this.s.dirty || (!force && now - this.savedAt < everyMs)) return undefined;
    this.s = learn.saved(this.s);
    this.savedAt = now;
    return learn.lesson(this.s, this.lessonKey, now);
  }

  /** Another replica wrote here last, at `at`: the bucket was empty then (+ margin) and refilled since. */
  spentAt(at: number, now: number): void {
    this.refillTo(now);
    const since = Math.max(0, now - at - this.s.marginMs);
    this.setTokens(Math.min(this.tokens.tokens, since * this.myRate));
    this.lastActivity = Math.max(this.lastActivity, Math.min(at, now));
  }

  grant(now: number): void {
    // A write on a raised burst is the family's one probe out until it is answered.
    if (this.probingUp) this.lock.take(this.key, now);
    this.grantedAt = now;
    this.inFlight++;
    this.refillTo(now);
    this.lastActivity = now;
    this.setTokens(this.tokens.tokens - 1);
    if (this.tokens.tokens < 1) this.pressed();
    this.allow((r) => r - 1);
  }

  /**
   * Accepted: counted between the grant and now (late under load), so its token refills from the
   * answer. A whole run may confirm the burst, or raise it (probe: the room is in hand at once).
   */
  accept(now: number): void {
    this.lastActivity = now;
    this.grantedAt = now;
    this.s = learn.accepted(this.s, now, this.myRate);
    if (now < this.tokens.at) return;
    this.refillTo(now);
    this.setTokens(Math.min(this.tokens.tokens, this.myBurst - 1) + this.probe(now));
  }

  private probe(now: number): number {
    if (this.share !== 1 || !this.mode.probes) return 0;
    const confirmed = learn.confirmRun(this.s, now);
    if (confirmed !== undefined) {
      this.s = confirmed;
      this.lock.confirmed();
      if (!this.probingUp) this.lock.release(this.key);
    }
    if (!this.lock.mayProbe(this.key, now)) return 0;
    const raised = learn.probe(this.s, now, this.lock.refusals);
    if (raised === undefined) return 0;
    this.lock.take(this.key, now);
    this.s = raised.s;
    return raised.added;
  }

  /** A granted write was answered (whatever the answer). */
  settle(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
  }

  /** The write was refused (or never sent): its token was not spent. */
  refund(): void {
    this.setTokens(Math.min(this.myBurst, this.tokens.tokens + 1));
    this.allow((r) => r + 1);
  }

  /** A 429 that blames this bucket (its mode's shrink); a header bucket only backs off. */
  shrink(now: number, grantedAt: number): void {
    const r = this.mode.shrink(this.s, now, grantedAt, this.share);
    // Tokens refill at the numbers the write was granted under; backing off alone touches none.
    if (r.kind !== 'followed') this.refillTo(now);
    this.s = r.s;
    if (r.kind === 'probe') {
      this.lock.refused(this.key);
      this.setTokens(0); // the platform's bucket is empty now
      this.probeRefusedAt = now;
    } else if (r.kind === 'shrunk') {
      this.setTokens(Math.min(this.tokens.tokens, this.myBurst));
    }
  }

  /** The evidence said its wider bucket after all: the place's limit is forgotten (place-blame.ts). */
  placeCleared(now: number): void {
    this.s = placeCleared(this.s, now);
  }

  /** A 429 of its wider bucket blamed on this place: it learns its first limit, or shrinks. */
  placeBlamed(now: number, grantedAt: number, retryAfterMs: number): void {
    const margin = placeMarginMs(retryAfterMs);
    if (!this.mode.limitsNothing) this.shrink(now, grantedAt);
    else {
      this.s = placeLimit(this.s, now, retryAfterMs, margin);
      this.tokens = replay(this.s.accepted, this.myRate, this.myBurst, now);
    }
    this.block(now, retryAfterMs, margin);
  }

  /** An out-of-band 429 (no write of ours): blocked and paced after, nothing learned. */
  limited(now: number, retryAfterMs: number): void {
    this.s = learn.limited(this.s, now);
    this.block(now, retryAfterMs);
  }

  /**
   * Refused for `retryAfterMs`: after it one write goes, the rest paced. After a refused probe the
   * platform's bucket was empty at the refusal and refills through the block: finals go with that.
   */
  block(now: number, retryAfterMs: number, marginMs = this.s.marginMs): void {
    this.refillTo(now);
    const end = now + retryAfterMs + marginMs;
    this.blockedUntil = Math.max(this.blockedUntil, end);
    this.lastActivity = now;
    const at = Math.max(end, this.tokens.at);
    const refilled = refill(this.tokens, this.myRate, this.myBurst, at).tokens;
    this.tokens = { tokens: this.probeRefusedAt === now ? refilled : Math.min(1, refilled), at };
  }

  /**
   * Headers from a write's answer (or an SDK's event). `answered`: how many writes in flight they
   * may already count (1 for an SDK's response event, which comes before the write's own answer).
   */
  observe(info: RateLimitInfo, now: number, answered = 0): void {
    this.refillTo(now);
    this.headers = followHeaders(this.headers, info, this.s);
    this.setTokens(Math.min(this.tokens.tokens, this.myBurst));
    this.lastActivity = now;
    if (info.remaining === undefined || info.resetAfterMs === undefined) return;
    const until = now + info.resetAfterMs + this.s.marginMs;
    // What the platform has left (this replica's part), less our writes it has not counted yet.
    const remaining = this.mine(info.remaining, 0) - Math.max(0, this.inFlight - answered);
    if (remaining <= 0) this.blockedUntil = Math.max(this.blockedUntil, until);
    else this.headers = { ...this.headers, allowance: { remaining, until } };
    if (this.headers.limit === undefined) return;
    // Its limit known, the platform's count is ours, and its bucket is full again at the reset.
    if (now >= this.tokens.at) this.setTokens(Math.min(this.myBurst, Math.max(0, remaining)));
    this.headers = { ...this.headers, resetAt: until };
  }
}

/**
 * The mode a bucket's values put it in: the headers' once they gave a limit, a place's while it
 * limits nothing (place-blame.ts: only a place's numbers are ever unlimited, its own or its
 * family's lesson), else learned. (Place buckets are Slack's, whose answers carry no limit
 * header: a place is never header-followed.)
 */
function modeOf(s: Learned, h: HeaderBucket | undefined, isPlace: boolean): Mode {
  if (h?.limit !== undefined) return HEADER_MODE;
  return isPlace && isUnlimited(s) ? PLACE_MODE : LEARNED_MODE;
}
