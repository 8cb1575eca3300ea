import { expect, it } from 'vitest';
import type { MemoryStore } from '../../../test/fakes/memory-store.js';
import { relayWorld } from '../../../test/fakes/relay-world.js';
import type { EventStore, Platform } from '../ports.js';
import type { SharedQueue } from './relay.js';

// Several replicas: a message joins its place's queue (SharedQueue) the moment it is handed to the
// relay, before the dedup round trip, so a later message at another replica cannot overtake it
// while this one is being recorded; a duplicate leaves the queue again.

/** Place locks that grant at once and log each join and leave by event id. */
function loggedLocks(log: string[]): SharedQueue {
  return {
    join(placeKey, ticket) {
      log.push(`join ${ticket.id.split('#')[0]}`);
      return {
        joined: Promise.resolve(),
        acquire: () => Promise.resolve({ handedOver: undefined, release: () => Promise.resolve() }),
        leave: () => log.push(`leave ${ticket.id.split('#')[0]}`),
      };
    },
  };
}

it('joins the place queue at handle(), before the dedup answers; a duplicate leaves it', async () => {
  const log: string[] = [];
  // A dedup record that answers only when the test says so (a slow database).
  const answers: Array<() => void> = [];
  const slowDedup = (store: MemoryStore): EventStore => ({
    recordDelivery: (p: Platform, id: string, at: number) =>
      new Promise<boolean>((resolve) => answers.push(() => resolve(store.events.recordDelivery(p, id, at)))),
    wasDelivered: (p: Platform, id: string) => store.events.wasDelivered(p, id),
    prune: async () => 0,
  });
  const sharedQueue = loggedLocks(log);
  const { clock, conn } = relayWorld((store) => ({ events: slowDedup(store), sharedQueue }));
  const first = conn.send({ text: 'one', eventId: 'ev-1' });
  const again = conn.send({ text: 'one', eventId: 'ev-1' });
  expect(log).toEqual(['join ev-1', 'join ev-1']); // both in line before any dedup answer
  for (const answer of answers.splice(0)) answer();
  await clock.advanceUntil(() => log.includes('leave ev-1'), 5_000, 10);
  expect(await again).toEqual({ status: 'duplicate' });
  await clock.advanceUntil(() => conn.contentsIn('C1').length > 0, 60_000, 100);
  expect(await first).toEqual({ status: 'answered' });
  expect(log).toEqual(['join ev-1', 'join ev-1', 'leave ev-1']);
});

it('a connector takes the place in line on arrival (arrive), so later awaits cannot lose it', async () => {
  const log: string[] = [];
  const sharedQueue = loggedLocks(log);
  const { clock, conn, relay } = relayWorld({ sharedQueue });
  const place = { platform: 'test' as const, channelId: 'C1' };
  // Arrived, then the connector's own awaits: the line was joined at arrival, once.
  const arrival = relay.arrive(place, 'ev-1', clock.now());
  expect(log).toEqual(['join ev-1']);
  const answered = relay.handle({ ...conn.message({ text: 'one', eventId: 'ev-1' }), arrival });
  expect(log).toEqual(['join ev-1']);
  arrival.leave(); // handle() took it up: leaving now does nothing
  await clock.advanceUntil(() => conn.contentsIn('C1').length > 0, 60_000, 100);
  expect(await answered).toEqual({ status: 'answered' });
  expect(log).toEqual(['join ev-1']);

  // Dropped by the connector before handle() (not a member of the thread, say): it leaves.
  relay.arrive(place, 'ev-2', clock.now()).leave();
  // Refused by the relay before its turn (nothing to answer): the arrival's place is given up.
  const empty = relay.arrive(place, 'ev-3', clock.now());
  expect(await relay.handle({ ...conn.message({ text: '   ', eventId: 'ev-3' }), arrival: empty })).toEqual({
    status: 'ignored',
  });
  expect(log).toEqual(['join ev-1', 'join ev-2', 'leave ev-2', 'join ev-3', 'leave ev-3']);
});
