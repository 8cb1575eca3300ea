// The order in which waiting writes are offered a bucket's budget: by priority first (finals,
// then first posts, then edits, then the bridge's own notices), and within a priority in turn by
// party (the user whose reply it is): the i-th waiting write of every party before the (i+1)-th
// of any, and among those the party served longest ago first. A write with no party is a party
// of its own, so callers that name none keep plain FIFO order within a priority.

export interface FairWaiter {
  /** Arrival order. */
  seq: number;
  /** Priority rank, lower first. */
  rank: number;
  party: string | undefined;
}

/** A party not served for this long is forgotten (bounded memory): it counts as never served. */
const FORGET_MS = 60_000;

export class FairOrder {
  /** Party → the serial of its last grant, and when that was (for forgetting). */
  private readonly last = new Map<string, { serial: number; at: number }>();
  private serial = 0;
  private lastSweep = 0;

  /** `waiters` (sorted by rank, then seq) in the order to serve them. */
  order<W extends FairWaiter>(waiters: readonly W[]): readonly W[] {
    if (!waiters.some((w) => w.party !== undefined)) return waiters;
    const rounds = new Map<string, number>();
    const keyed = waiters.map((w) => {
      if (w.party === undefined) return { w, round: 0, last: -1 };
      const key = `${w.rank}\u0000${w.party}`;
      const round = rounds.get(key) ?? 0;
      rounds.set(key, round + 1);
      return { w, round, last: this.last.get(w.party)?.serial ?? -1 };
    });
    keyed.sort((a, b) => a.w.rank - b.w.rank || a.round - b.round || a.last - b.last || a.w.seq - b.w.seq);
    return keyed.map((k) => k.w);
  }

  /** A write of `party` was granted. */
  served(party: string | undefined, now: number): void {
    if (party === undefined) return;
    this.last.delete(party);
    this.last.set(party, { serial: this.serial++, at: now });
    if (now - this.lastSweep < FORGET_MS) return;
    this.lastSweep = now;
    // Oldest first (re-inserted on every grant): stop at the first one still remembered.
    for (const [p, { at }] of this.last) {
      if (at > now - FORGET_MS) break;
      this.last.delete(p);
    }
  }

  /** Parties remembered (tests: memory stays bounded). */
  get size(): number {
    return this.last.size;
  }
}

/** Insert `w` into `list`, kept sorted by (rank, seq). */
export function insertByRank<W extends FairWaiter>(list: W[], w: W): void {
  let i = list.length;
  while (i > 0) {
    const prev = list[i - 1] as W;
    if (prev.rank < w.rank || (prev.rank === w.rank && prev.seq < w.seq)) break;
    i--;
  }
  list.splice(i, 0, w);
}
