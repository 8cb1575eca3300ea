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

    it("a flood from many addresses of a few networks never cancels a lone user's pending link", async () => {
      const { s, database } = ctx();
      const t = await database.open();
      const total = 20;
      const limit = (client: string, network: string) => ({ client, network, max: 5, now: 100, total });
      // The victim's link is the oldest of all: the old rule dropped it first.
      expect(await s.oauthStates.issue('victim', 1000, limit('198.51.100.7', '198.51.100.0/24'))).toBe(true);
      // The attack: 4 networks, 3 addresses each, 5 links an address, on two replicas (60 asks).
      const attack: string[] = [];
      let n = 0;
      for (let net = 0; net < 4; net++)
        for (let a = 0; a < 3; a++)
          for (let k = 0; k < 5; k++) {
            const state = `flood-${net}-${a}-${k}`;
            const store = n++ % 2 ? t : s;
            if (await store.oauthStates.issue(state, 1001 + n, limit(`10.${net}.0.${a}`, `10.${net}.0.0/24`)))
              attack.push(state);
          }
      expect(attack.length).toBeGreaterThanOrEqual(total - 1);
      // A newcomer from another network gets a link (made room for from the biggest holder).
      expect(await t.oauthStates.issue('newcomer', 2000, limit('203.0.113.9', '203.0.113.0/24'))).toBe(true);
      // The victim's link survives and works, as does the newcomer's; the bound held throughout.
      expect(await s.oauthStates.consume('victim', 500)).toBe(true);
      expect(await t.oauthStates.consume('newcomer', 500)).toBe(true);
      let good = 0;
      for (const state of attack) if (await s.oauthStates.consume(state, 500)) good++;
      expect(good).toBeLessThanOrEqual(total - 2);
    });

    it('when every network holds one pending link, a newcomer is refused and nobody is cancelled', async () => {
      const { s, database } = ctx();
      const t = await database.open();
      const limit = (i: number) => ({ client: `10.${i}.0.1`, network: `10.${i}.0.0/24`, max: 5, now: 100, total: 4 });
      for (let i = 0; i < 4; i++)
        expect(await (i % 2 ? t : s).oauthStates.issue(`lone-${i}`, 1000 + i, limit(i))).toBe(true);
      expect(await s.oauthStates.issue('fifth', 2000, limit(9))).toBe(false);
      // The newcomer's own network holding the most is refused too, not served from the others.
      expect(await s.oauthStates.issue('again', 2000, limit(0))).toBe(false);
      for (let i = 0; i < 4; i++) expect(await t.oauthStates.consume(`lone-${i}`, 500)).toBe(true);
      expect(await s.oauthStates.consume('fifth', 500)).toBe(false);
    });

    it('takes from the client holding the most within the biggest network, oldest first', async () => {
      const { s } = ctx();
      const limit = (client: string, network: string) => ({ client, network, max: 5, now: 100, total: 6 });
      expect(await s.oauthStates.issue('lone', 1000, limit('10.9.0.1', '10.9.0.0/24'))).toBe(true);
      expect(await s.oauthStates.issue('neighbour', 1001, limit('10.0.0.1', '10.0.0.0/24'))).toBe(true);
      for (let k = 0; k < 4; k++)
        expect(await s.oauthStates.issue(`big-${k}`, 1002 + k, limit('10.0.0.2', '10.0.0.0/24'))).toBe(true);
      // Full: the network 10.0.0.0/24 holds 5, within it 10.0.0.2 holds 4; its oldest goes.
      expect(await s.oauthStates.issue('new', 2000, limit('192.0.2.1', '192.0.2.0/24'))).toBe(true);
      expect(await s.oauthStates.consume('big-0', 500)).toBe(false);
      for (const state of ['lone', 'neighbour', 'big-1', 'big-2', 'big-3', 'new'])
        expect(await s.oauthStates.consume(state, 500), state).toBe(true);
    });

    it('holds `max` per client when many asks from one address race on two replicas', async () => {
      const { s, database } = ctx();
      const t = await database.open();
      for (let round = 0; round < 3; round++) {
        const limit = { client: `10.3.0.${round}`, network: '10.3.0.0/24', max: 5, now: 100, total: 10_000 };
        const asks = Array.from({ length: 12 }, (_, i) =>
          (i % 2 ? t : s).oauthStates.issue(`race-${round}-${i}`, 1000, limit),
        );
        const got = await Promise.all(asks);
        expect(got.filter(Boolean), `round ${round}`).toHaveLength(5);
      }
    });
  });
}
