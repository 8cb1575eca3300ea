import type { Lesson } from '../ports.js';
import type { BucketMode } from './bucket-mode.js';
import { BUDGET } from './budget-settings.js';
import { acceptedSince, type Learned, probingUp, rateCounted, restore, shrink } from './learning.js';

// A place's share of a wider bucket (BucketRef.placeOf: a Slack channel's chat.update calls, which
// Slack limits per workspace and documents no other limit for). Such a bucket limits nothing until a
// 429 of the wider bucket is blamed on its place; then it learns the place's limit, and its family
// (every channel of the workspace) with it. Blaming the place wrongly costs one more 429 (the
// next write of another place meets the wider bucket's limit, which is then blamed); blaming the
// wider bucket wrongly blocks every place for a Retry-After and a margin, and strands the finals
// of places that had room. So a 429 is the place's only when the evidence says so:
//
// - the place had several writes accepted within the run (BUDGET.runMs), and the wider bucket
//   accepted others' writes in the same run (one place writing: both fit, the wider bucket is the
//   safe blame);
// - no other place was blamed within that place's block: a second place refused meanwhile says
//   the wider bucket is the limit (which is then blamed, and the place's lesson dropped).
//
// PLACE_MODE is the Bucket's strategy while its place limits nothing (bucket-mode.ts); once blamed,
// it is learned (learning.ts LEARNED_MODE) until cleared.

/** The numbers of a place bucket that has learned nothing: it never makes a write wait. */
const UNLIMITED = 1e9;

export function unlimited(s: Learned): Learned {
  return { ...s, rate: UNLIMITED, burst: UNLIMITED, confirmedBurst: UNLIMITED };
}

export function isUnlimited(s: Learned): boolean {
  return s.burst >= UNLIMITED;
}

export interface PlaceBlameEvidence {
  /** The place's writes accepted within the run before the 429. */
  placeRun: number;
  /** The wider bucket's writes accepted within the same run (every place's). */
  wholeRun: number;
  /** The place refused now, and the last place blamed in this wider bucket (until its block ends). */
  place: string;
  last: { place: string; until: number } | undefined;
  now: number;
}

/**
 * A place no 429 was blamed on: its numbers (UNLIMITED) never make a write wait and there is
 * nothing to probe for; a 429 it is named for shrinks it as any bucket's.
 */
export const PLACE_MODE: BucketMode<Learned, unknown> = {
  name: 'place-blamed',
  limitsNothing: true,
  probes: false,
  numbers: (s) => s,
  probingUp,
  rateCounted,
  shrink,
};

/** Is a 429 of the wider bucket this place's? (See above.) */
export function blamesPlace(e: PlaceBlameEvidence): boolean {
  if (e.last !== undefined && e.now < e.last.until && e.last.place !== e.place) return false;
  return e.placeRun >= 2 && e.wholeRun > e.placeRun;
}

/** The place's writes accepted within the run before `now`. */
export function placeRun(s: Learned, now: number): number {
  return acceptedSince(s, now - BUDGET.runMs);
}

/**
 * The place's first limit, from its 429: the burst it accepted in the run, then one write per
 * Retry-After (and `marginMs`), which a token bucket's refusal names. No growth or probe for
 * recentLimitMs; a later 429 of the place shrinks it as any bucket's (learning.shrink).
 */
export function placeLimit(s: Learned, now: number, retryAfterMs: number, marginMs: number): Learned {
  const burst = Math.max(1, placeRun(s, now));
  const rate = 1 / (retryAfterMs + marginMs);
  return {
    ...s,
    rate,
    burst,
    confirmedBurst: burst,
    rateAt429: rate,
    lastLimitedAt: now,
    lastShrinkAt: now,
    growthCheckAt: now,
    learnedAt: now,
    dirty: true,
  };
}

/**
 * A place blamed wrongly (another place was refused while it was blocked: the wider bucket is the
 * limit): it limits nothing again. Its lesson says so (burst UNLIMITED), for the family and the store.
 */
export function placeCleared(s: Learned, now: number): Learned {
  const never = Number.NEGATIVE_INFINITY;
  return { ...unlimited(s), lastLimitedAt: never, lastShrinkAt: never, rateAt429: 0, learnedAt: now, dirty: true };
}

/** A lesson replaces the numbers (learning.restore); a cleared place's (placeCleared) limits nothing. */
export function restorePlace(s: Learned, l: Lesson, now: number): Learned {
  const next = restore(s, l, now);
  return l.burst >= UNLIMITED ? unlimited(next) : next;
}

/** The margin of a place's block: its Retry-After's (BUDGET.marginFraction, at least minMarginMs). */
export function placeMarginMs(retryAfterMs: number): number {
  return Math.max(BUDGET.minMarginMs, Math.ceil(retryAfterMs * BUDGET.marginFraction));
}
