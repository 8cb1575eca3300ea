import { describe, expect, it } from 'vitest';
import type { ContractContext } from './contract.js';

// The contract's Slack OAuth state cases (OAuthStateStore), on every backend.

export function oauthStateContract(ctx: () => ContractContext) {
  describe('oauth states', () => {
    it('a state is good once, through its expiry, on any replica', async () => {
      const { s, database } = ctx();
      const t = await database.open();
      await s.oauthStates.issue('st-1', 1000);
      await s.oauthStates.issue('st-2', 1000);
      expect(await t.oauthStates.consume('st-1', 1000)).toBe(true); // the last good instant
      expect(await s.oauthStates.consume('st-1', 1000)).toBe(false);
      expect(await t.oauthStates.consume('st-1', 500)).toBe(false);
      expect(await s.oauthStates.consume('unknown', 1)).toBe(false);
      // Expired: refused, and used up all the same.
      expect(await s.oauthStates.consume('st-2', 1001)).toBe(false);
      expect(await s.oauthStates.consume('st-2', 1)).toBe(false);
    });

    it('refuses a state issued twice', async () => {
      const { s } = ctx();
      await s.oauthStates.issue('dup', 1000);
      await expect(s.oauthStates.issue('dup', 2000)).rejects.toThrow();
      expect(await s.oauthStates.consume('dup', 1000)).toBe(true);
    });

    it('prune forgets states that expired before the cut', async () => {
      const { s } = ctx();
      await s.oauthStates.issue('a', 100);
      await s.oauthStates.issue('b', 200);
      await s.oauthStates.issue('c', 300);
      expect(await s.oauthStates.prune(200)).toBe(1);
      expect(await s.oauthStates.consume('a', 50)).toBe(false);
      expect(await s.oauthStates.consume('b', 150)).toBe(true);
      expect(await s.oauthStates.prune(1000)).toBe(1);
      expect(await s.oauthStates.consume('c', 250)).toBe(false);
    });

    it('of two replicas consuming one state at once, exactly one succeeds', async () => {
      const { s, database } = ctx();
      const t = await database.open();
      for (let round = 0; round < 5; round++) {
        const state = `race-${round}`;
        await (round % 2 ? t : s).oauthStates.issue(state, 10_000);
        const got = await Promise.all([s.oauthStates.consume(state, 5000), t.oauthStates.consume(state, 5000)]);
        expect(got.filter(Boolean), state).toHaveLength(1);
      }
    });

    it('holds at most `max` good states per client, on any replica, and drops no other', async () => {
      const { s, database } = ctx();
      const t = await database.open();
      const limit = (client: string, now = 100) => ({ client, max: 3, now });
      expect(await s.oauthStates.issue('other-1', 1000, limit('10.0.0.2'))).toBe(true);
      const got: boolean[] = [];
      for (let i = 0; i < 6; i++)
        got.push(await (i % 2 ? t : s).oauthStates.issue(`flood-${i}`, 1000, limit('10.0.0.1')));
      expect(got).toEqual([true, true, true, false, false, false]);
      // Refused means not stored; the other client's state is untouched.
      expect(await s.oauthStates.consume('flood-3', 500)).toBe(false);
      expect(await t.oauthStates.consume('other-1', 500)).toBe(true);
      // A state used, or expired at `now`, no longer counts.
      expect(await s.oauthStates.consume('flood-0', 500)).toBe(true);
      expect(await s.oauthStates.issue('flood-6', 1000, limit('10.0.0.1'))).toBe(true);
      expect(await s.oauthStates.issue('flood-7', 1000, limit('10.0.0.1'))).toBe(false);
      expect(await s.oauthStates.issue('flood-8', 2000, limit('10.0.0.1', 1001))).toBe(true);
      // Without a limit, as before.
      expect(await s.oauthStates.issue('plain', 1000)).toBe(true);
    });

    it('holds at most `total` pending states in all: the oldest are dropped first, on any replica', async () => {
      const { s, database } = ctx();
      const t = await database.open();
      const limit = (client: string) => ({ client, max: 2, now: 100, total: 4 });
      // Many clients, each within its own bound, issued one after another (later expiry).
      for (let i = 0; i < 10; i++)
        expect(await (i % 2 ? t : s).oauthStates.issue(`many-${i}`, 1000 + i, limit(`10.1.0.${i}`))).toBe(true);
      // The newest 4 are good; the 6 before them were dropped, oldest first.
      const good: string[] = [];
      for (let i = 0; i < 10; i++) if (await s.oauthStates.consume(`many-${i}`, 500)) good.push(`many-${i}`);
      expect(good).toEqual(['many-6', 'many-7', 'many-8', 'many-9']);
      // The per-client bound still refuses before anything is dropped.
      expect(await s.oauthStates.issue('x-1', 2000, limit('10.2.0.1'))).toBe(true);
      expect(await s.oauthStates.issue('x-2', 2001, limit('10.2.0.1'))).toBe(true);
      expect(await s.oauthStates.issue('x-3', 2002, limit('10.2.0.1'))).toBe(false);
      expect(await t.oauthStates.consume('x-1', 500)).toBe(true);
    });
  });
}
