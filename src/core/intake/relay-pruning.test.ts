import { expect, it } from 'vitest';
import { relayWorld } from '../../../test/fakes/relay-world.js';

// Pruning runs on its own hourly timer, never on a message's path (issue 30: it used to be
// checked on every message, so it showed in the measured walk), and stops with the drain.

it('prunes on a timer of its own, hourly, with no message on its path, until the drain', async () => {
  const { conn, store, clock, relay } = relayWorld();
  const first = conn.send({ text: 'x', eventId: 'E1' });
  await clock.advanceUntil(() => conn.contentsIn('C1').length > 0, 60_000, 100);
  expect(await first).toEqual({ status: 'answered' });
  let prunes = 0;
  const prune = store.events.prune.bind(store.events);
  store.events.prune = (before: number) => (prunes++, prune(before));
  await clock.advance(25 * 3600_000); // no message meanwhile
  expect(prunes).toBe(25);
  expect(await store.events.wasDelivered('test', 'E1')).toBe(false);
  await relay.drain(1000);
  await clock.advance(3 * 3600_000);
  expect(prunes).toBe(25);
});
