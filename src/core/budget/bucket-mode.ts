// How a bucket has its numbers: one strategy per mode, and the Bucket (bucket.ts) delegates to the
// one its values put it in (modeOf there) instead of testing what it is at every turn.
// - learned (learning.ts LEARNED_MODE): a first guess that 429s shrink, demand grows and probes raise;
// - header-followed (header-bucket.ts HEADER_MODE): the platform's headers gave a limit, followed as is;
// - place-blamed (place-blame.ts PLACE_MODE): a place's share of a wider bucket, limiting nothing
//   until a 429 is blamed on the place (then it is learned like any bucket).
// `S` is what is learned (learning.ts Learned), `H` what the headers said (header-bucket.ts
// HeaderBucket): type parameters, so that this file imports none of the modes it names.

/** The whole platform's numbers, as the mode has them: tokens per ms, burst, the burst confirmed. */
export interface Numbers {
  readonly rate: number;
  readonly burst: number;
  readonly confirmedBurst: number;
}

/** What a 429 blamed on the bucket did: learning.shrink's kinds, or 'followed' (headers: only backs off). */
export type ShrinkKind = 'stale' | 'probe' | 'shrunk' | 'followed';

export interface BucketMode<S, H> {
  readonly name: 'learned' | 'header-followed' | 'place-blamed';
  /** Limits nothing (a place no 429 was blamed on): its tokens say nothing until it learns a limit. */
  readonly limitsNothing: boolean;
  /** May a run the platform accepted whole confirm the burst, and raise it (a probe)? */
  readonly probes: boolean;
  numbers(s: S, h: H | undefined): Numbers;
  /** A raised burst is out, not confirmed yet (one probe at a time in a family). */
  probingUp(s: S): boolean;
  /** May refill be counted on ahead of time (learning.rateCounted)? */
  rateCounted(s: S): boolean;
  /** The numbers after a 429 that blames this bucket, written `grantedAt`; `share`: this replica's. */
  shrink(s: S, now: number, grantedAt: number, share: number): { s: S; kind: ShrinkKind };
}
