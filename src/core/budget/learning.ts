import type { Lesson } from '../ports.js';
import type { BucketMode } from './bucket-mode.js';
import { BUDGET, MINUTE } from './budget-settings.js';

// How a bucket's numbers are learned, as pure functions over plain values (`Learned`: shrink, grow,
// probe). Numbers the platform's headers give are followed instead (header-bucket.ts); every tuning
// constant is in BUDGET (budget-settings.ts). The owning Bucket (bucket.ts) keeps the values.
// The states these functions move a bucket through: docs/bucket-states.md.
//
// The connector's limit per window is a first guess, turned into a token bucket that never puts
// more than `limit` writes in any window: burst b and rate (limit - b + 1) per window (+ margin),
// safe against fixed, sliding and token limits.
// - shrink: a 429 is evidence: the numbers fall to what the platform accepted (at most 0.7x the
//   rate, never below one write per window); a probe that meets it falls back instead.
// - grow: while no 429 comes and writes wait, the rate climbs back (+5% a minute, or a write per
//   window below the first guess; at most 2x it, and for 10 minutes at most 90% of the rate that
//   met the 429); the burst by one a minute once the 429 is old.
// - probe: when room was wanted and the platform accepted a whole burst in one run, the burst is
//   raised (by 3/4 until the first 429 ever, then by one), up to half a per-minute limit or a short
//   window's shortBurstCeiling. What is accepted whole is confirmed; a lesson keeps what is.
//
// Several replicas: the numbers are the whole platform's bucket; the Bucket spends its share.
// LEARNED_MODE (at the end) is the Bucket's strategy while its numbers are these (bucket-mode.ts).

/** What is known and learned of one bucket: a plain value, replaced whole on every change. */
export interface Learned {
  /** The reference budget: the connector's default limit per window (the first guess). */
  readonly limit: number;
  readonly windowMs: number;
  readonly marginMs: number;
  /** Made by a 429 reported before any write: the first BucketRef supplies the real budget. */
  readonly provisional: boolean;
  /** One of a family (BucketRef.family): a short window of one write may probe for a burst. */
  readonly inFamily: boolean;
  /** Tokens per ms: the whole platform's sustained rate, as learned. */
  readonly rate: number;
  /** The whole platform's burst, as learned: while a probe is out, above `confirmedBurst`. */
  readonly burst: number;
  /** A burst the platform has accepted whole (or the first guess, or a lesson). */
  readonly confirmedBurst: number;
  readonly lastShrinkAt: number;
  readonly lastLimitedAt: number;
  /** The rate (per ms) assumed when the last 429 came. */
  readonly rateAt429: number;
  /** The platform accepted a whole window's worth at the assumed rate (see rateCounted). */
  readonly proven: boolean;
  /** Times of accepted writes over the last window (bounded). */
  readonly accepted: readonly number[];
  /** When a reply last went post-once for want of this budget (what makes a probe look). */
  readonly wantedAt: number;
  /** Some write waited for this bucket's tokens since the last growth check. */
  readonly pressed: boolean;
  readonly growthCheckAt: number;
  /** When the numbers last changed, or the time of the lesson they came from. */
  readonly learnedAt: number;
  /** Changed since the last lesson was taken. */
  readonly dirty: boolean;
}

export interface Reference {
  limit: number;
  windowMs: number;
  marginMs: number;
}

export function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}

/** The first guess: a modest burst per minute, none for a short window, and a window-safe rate. */
export function firstGuess(r: Reference): { rate: number; burst: number } {
  const span = r.windowMs + r.marginMs;
  const burst = r.windowMs >= BUDGET.longWindowMs ? clamp(Math.floor(r.limit / 10), 1, BUDGET.maxStartBurst) : 1;
  return { rate: (r.limit - burst + 1) / span, burst };
}

export function startLearning(r: Reference, now: number, inFamily: boolean, provisional = false): Learned {
  const limit = Math.max(1, r.limit);
  const windowMs = Math.max(1, r.windowMs);
  const d = firstGuess({ limit, windowMs, marginMs: r.marginMs });
  return {
    limit,
    windowMs,
    marginMs: r.marginMs,
    provisional,
    inFamily,
    rate: d.rate,
    burst: d.burst,
    confirmedBurst: d.burst,
    lastShrinkAt: Number.NEGATIVE_INFINITY,
    lastLimitedAt: Number.NEGATIVE_INFINITY,
    rateAt429: 0,
    proven: false,
    accepted: [],
    wantedAt: Number.NEGATIVE_INFINITY,
    pressed: false,
    growthCheckAt: now,
    learnedAt: Number.NEGATIVE_INFINITY,
    dirty: false,
  };
}

/** A provisional bucket meets its real budget: the first guess of it. */
export function reconfigured(s: Learned, r: Reference): Learned {
  const limit = Math.max(1, r.limit);
  const windowMs = Math.max(1, r.windowMs);
  const d = firstGuess({ limit, windowMs, marginMs: r.marginMs });
  return { ...s, provisional: false, limit, windowMs, marginMs: r.marginMs, ...d, confirmedBurst: d.burst };
}

function changed(s: Learned, now: number): Learned {
  return { ...s, dirty: true, learnedAt: now };
}

/** Never less than one write per window. */
export function floorRate(s: Learned): number {
  return 1 / (s.windowMs + s.marginMs);
}

function span(s: Learned): number {
  return s.windowMs + s.marginMs;
}

export function acceptedSince(s: Learned, from: number): number {
  let n = 0;
  for (let i = s.accepted.length - 1; i >= 0 && (s.accepted[i] as number) > from; i--) n++;
  return n;
}

/**
 * Refill may be counted on ahead of time: a short window's (paced at its rate from the start), or
 * a per-minute rate that a 429 or a proven window confirmed.
 */
export function rateCounted(s: Learned): boolean {
  return s.windowMs < BUDGET.longWindowMs || Number.isFinite(s.lastShrinkAt) || s.proven;
}

/**
 * The highest burst a probe may reach: half a per-minute bucket's limit (the other half stays for
 * the sustained rate), a few writes for a short window's family of one write a window; alone, or
 * with more a window, a short window keeps its rate (a larger burst would have to lower it).
 */
export function burstCeiling(s: Learned): number {
  if (s.windowMs < BUDGET.longWindowMs) {
    if (!s.inFamily || s.limit > 1) return s.burst;
    return Math.max(s.burst, BUDGET.shortBurstCeiling);
  }
  return Math.max(s.burst, Math.ceil(s.limit / 2));
}

export function probingUp(s: Learned): boolean {
  return s.burst > s.confirmedBurst;
}

/**
 * The time passed: at each minute, a bucket that writes waited for and met no 429 in it grows.
 * The burst grows back only once the 429 is old (a platform with a smaller burst would refuse
 * the same burst again); a short window's rate is the platform's published one, its room is in
 * the burst (probed), so its rate never grows above the first guess.
 */
export function grow(s: Learned, now: number): Learned {
  if (now - s.growthCheckAt < MINUTE) return s;
  let next: Learned = { ...s, pressed: false, growthCheckAt: now };
  if (!s.pressed || now - s.lastLimitedAt < MINUTE) return next;
  const d = firstGuess(s);
  const recent = now - s.lastShrinkAt < BUDGET.recentLimitMs;
  let cap = s.windowMs < BUDGET.longWindowMs ? d.rate : d.rate * BUDGET.maxGrowth;
  if (recent) cap = Math.min(cap, BUDGET.safety * s.rateAt429);
  if (s.rate < cap) {
    // Below the first guess by a write per window a minute (a deep cut recovers in minutes);
    // above it by 5%, so that 90% of a rate that met a 429 is below the platform's limit again.
    const step = s.rate < d.rate ? Math.min(d.rate, s.rate + floorRate(s)) : 0;
    next = changed({ ...next, rate: Math.min(cap, Math.max(s.rate * BUDGET.growth, step)), proven: false }, now);
  }
  if (!recent && next.burst < d.burst) {
    next = changed({ ...next, burst: next.burst + 1, confirmedBurst: next.burst + 1 }, now);
  }
  return next;
}

/** A write waited for this bucket's tokens: demand is there (what lets it grow). */
export function pressed(s: Learned): Learned {
  return s.pressed ? s : { ...s, pressed: true };
}

/** A reply went post-once for want of this budget: room would have been used. */
export function wanted(s: Learned, now: number): Learned {
  return { ...s, wantedAt: now };
}

/** Several posts wait at once: in a short window's family, room would be used. */
export function postsWaited(s: Learned, now: number): Learned {
  return s.inFamily && s.windowMs < BUDGET.longWindowMs ? wanted(s, now) : s;
}

/** An out-of-band 429: blocked, learns nothing, but no probe or growth for a while. */
export function limited(s: Learned, now: number): Learned {
  return { ...s, lastLimitedAt: now };
}

/**
 * An accepted write, logged. The platform took a window's worth at the rate we assume (`myRate`,
 * this replica's share of it): that rate is no longer a guess.
 */
export function accepted(s: Learned, now: number, myRate: number): Learned {
  const from = now - span(s);
  const max = 4 * s.limit + 16;
  const times = s.accepted.filter((t) => t > from);
  times.push(now);
  if (times.length > max) times.splice(0, times.length - max);
  const next = { ...s, accepted: times };
  if (!s.proven && acceptedSince(next, from) >= BUDGET.safety * myRate * span(s)) return { ...next, proven: true };
  return next;
}

/** Writes accepted within this long count as one run: a short window's own length, else runMs. */
function runMs(s: Learned): number {
  return Math.min(BUDGET.runMs, s.windowMs);
}

/** A run larger than the confirmed burst was accepted whole: it is confirmed. */
export function confirmRun(s: Learned, now: number): Learned | undefined {
  const run = acceptedSince(s, now - runMs(s));
  if (run <= s.confirmedBurst) return undefined;
  return changed({ ...s, confirmedBurst: Math.min(s.burst, run) }, now);
}

/**
 * May the burst be raised above what is confirmed? Not within recentLimitMs of a 429, doubled for
 * each refused probe in a row after the first: a platform with no more room pays one 429 per
 * probe, and fewer and fewer probes.
 */
export function mayProbeUp(s: Learned, now: number, refusals: number): boolean {
  const backoff = 2 ** clamp(refusals - 1, 0, BUDGET.maxProbeBackoff);
  return s.burst < burstCeiling(s) && now - s.lastLimitedAt >= BUDGET.recentLimitMs * backoff;
}

/**
 * Probe: raise the burst after a whole burst was accepted in one run while room was wanted (within
 * a minute; in a short window, within the window: a raise left unused would outlive the family's
 * lock). By three quarters until the first 429 ever, then one write at a time (replies streaming on
 * a probe that fails wait for their finals at the platform's rate: the overshoot is kept small).
 * The rate stays window-safe with the larger burst. Undefined: no probe.
 */
export function probe(s: Learned, now: number, refusals: number): { s: Learned; added: number } | undefined {
  if (!mayProbeUp(s, now, refusals)) return undefined;
  const wantedWithin = s.windowMs < BUDGET.longWindowMs ? s.windowMs : MINUTE;
  if (now - s.wantedAt > wantedWithin || acceptedSince(s, now - runMs(s)) < s.burst) return undefined;
  const step = Number.isFinite(s.lastLimitedAt) ? 1 : Math.ceil((s.burst * 3) / 4);
  const next = Math.min(burstCeiling(s), s.burst + step);
  const rate = Math.max(floorRate(s), Math.min(s.rate, (s.limit - next + 1) / span(s)));
  return {
    s: changed({ ...s, wantedAt: Number.NEGATIVE_INFINITY, burst: next, rate }, now),
    added: next - s.burst,
  };
}

/** Another member took the family's lock: a raise this one made and did not use is dropped. */
export function dropProbe(s: Learned): Learned {
  return { ...s, burst: s.confirmedBurst };
}

/**
 * A 429 that blames this bucket. One for a write granted before the last shrink was sent under the
 * old numbers: 'stale' (only the block). While a probe was out: back to the confirmed burst, the
 * rate untouched ('probe'). Else shrink to what the platform accepted over the last window (not
 * "since its previous 429": in a storm nothing is accepted between them); fewer accepted than one
 * burst is no evidence of the rate, then only the multiplicative cut. `share`: this replica's
 * (the others, each spending theirs, wrote about as many).
 */
export function shrink(
  s: Learned,
  now: number,
  grantedAt: number,
  share: number,
): { s: Learned; kind: 'stale' | 'probe' | 'shrunk' } {
  const hit = limited(s, now);
  if (grantedAt <= s.lastShrinkAt) return { s: hit, kind: 'stale' };
  if (probingUp(s)) return { s: changed(dropProbe(hit), now), kind: 'probe' };
  const mine = acceptedSince(s, now - span(s));
  const acc = share === 1 ? mine : mine / share;
  const estimate = (BUDGET.safety * acc) / span(s);
  const cut = acc > s.burst ? Math.min(s.rate * BUDGET.shrink, estimate) : s.rate * BUDGET.shrink;
  const burst = Math.max(1, Math.min(Math.floor(s.burst / 2), Math.floor(acc)));
  const next = { ...hit, rateAt429: s.rate, rate: Math.max(floorRate(s), cut), burst, confirmedBurst: burst };
  return { s: changed({ ...next, lastShrinkAt: now, growthCheckAt: now }, now), kind: 'shrunk' };
}

/** A lesson (a restart, a bucket forgotten while idle, another replica's newer one) replaces the numbers. */
export function restore(s: Learned, l: Lesson, now: number): Learned {
  const d = firstGuess(s);
  // A burst confirmed earlier (probed up) is kept up to the ceiling, not cut to the first guess.
  const burst = clamp(Math.floor(l.burst), 1, Math.max(d.burst, burstCeiling(s), 1));
  let next: Learned = {
    ...s,
    rate: clamp(l.perMinute / MINUTE, floorRate(s), d.rate * BUDGET.maxGrowth),
    burst,
    confirmedBurst: burst,
    learnedAt: l.updatedAt,
    dirty: false,
    growthCheckAt: now,
  };
  if (l.limitedAt !== undefined) {
    const rateAt429 = (l.limitedPerMinute ?? l.perMinute) / MINUTE;
    next = { ...next, lastLimitedAt: l.limitedAt, lastShrinkAt: l.limitedAt, rateAt429 };
  }
  return next;
}

/** The lesson to keep: dated when the numbers changed; the confirmed burst (a probe is a guess). */
export function lesson(s: Learned, key: string, now: number): Lesson {
  const l: Lesson = {
    key,
    perMinute: s.rate * MINUTE,
    burst: s.confirmedBurst,
    updatedAt: Number.isFinite(s.learnedAt) ? s.learnedAt : now,
  };
  if (Number.isFinite(s.lastLimitedAt)) {
    l.limitedAt = s.lastLimitedAt;
    l.limitedPerMinute = s.rateAt429 * MINUTE;
  }
  return l;
}

export function saved(s: Learned): Learned {
  return s.dirty ? { ...s, dirty: false } : s;
}

/** A bucket whose numbers are learned: every function above applies (bucket-mode.ts). */
export const LEARNED_MODE: BucketMode<Learned, unknown> = {
  name: 'learned',
  limitsNothing: false,
  probes: true,
  numbers: (s) => s,
  probingUp,
  rateCounted,
  shrink,
};
