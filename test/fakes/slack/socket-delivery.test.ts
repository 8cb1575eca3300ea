import { describe, expect, it } from 'vitest';
import { type Candidate, pickConnection } from './socket-delivery.js';

const conns = (...ids: number[]): Candidate[] => ids.map((id) => ({ id, retiring: false }));

/** The connections `n` envelopes go to, each picked after the one before (round-robin state). */
function spread(open: Candidate[], n: number, last = 0): number[] {
  const got: number[] = [];
  for (let i = 0; i < n; i++) {
    last = pickConnection(open, last, {})?.id ?? -1;
    got.push(last);
  }
  return got;
}

describe('fake Slack: which Socket Mode connection gets an envelope', () => {
  it('one connection takes everything', () => {
    expect(spread(conns(4), 3)).toEqual([4, 4, 4]);
  });

  it('several: round-robin in the order they opened, continuing across closes and opens', () => {
    expect(spread(conns(1, 2, 3), 7)).toEqual([1, 2, 3, 1, 2, 3, 1]);
    // 2 closed after it took the last one: 3 is next; a new 5 joins the turn.
    expect(spread(conns(1, 3, 5), 4, 2)).toEqual([3, 5, 1, 3]);
  });

  it('names a connection, or keeps a retry away from one', () => {
    const open = conns(1, 2, 3);
    expect(pickConnection(open, 0, { connection: 3 })?.id).toBe(3);
    expect(pickConnection(open, 0, { connection: 9 })).toBeUndefined();
    expect(pickConnection(open, 1, { avoid: 2 })?.id).toBe(3);
    expect(pickConnection(open, 3, { avoid: 1 })?.id).toBe(2);
    expect(pickConnection(conns(1), 0, { avoid: 1 })).toBeUndefined();
  });

  it('a refreshed connection gets envelopes only while no successor is open', () => {
    const old: Candidate = { id: 1, retiring: true };
    expect(pickConnection([old], 1, {})?.id).toBe(1);
    expect(pickConnection([old, { id: 2, retiring: false }], 0, {})?.id).toBe(2);
    expect(pickConnection([old, { id: 2, retiring: false }], 2, {})?.id).toBe(2);
  });
});
