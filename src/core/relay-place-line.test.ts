import { expect, it } from 'vitest';
import { FakeChat } from '../../test/fakes/fake-chat.js';
import { ManualClock } from '../../test/fakes/manual-clock.js';
import { openMemoryStore } from '../../test/fakes/memory-store.js';
import { testRelaySettings } from '../../test/fakes/relay-settings.js';
import { TestConnector } from '../../test/fakes/test-connector.js';
import { silentLogger } from '../logger.js';
import { noopMetrics } from './metrics-port.js';
import type { EventStore, Platform } from './ports.js';
import { createRelay, type PlaceLocks } from './relay.js';

// Several replicas: a message joins its place's line (PlaceLocks) the moment it is handed to the
// relay, before the dedup round trip, so a later message at another replica cannot overtake it
// while this one is being recorded; a duplicate leaves the line again.

it('joins the place line at handle(), before the dedup answers; a duplicate leaves it', async () => {
  const clock = new ManualClock();
  const store = openMemoryStore();
  const conn = new TestConnector({ clock, bucketLimit: 50 });
  const log: string[] = [];
  // A dedup record that answers only when the test says so (a slow database).
  const answers: Array<() => void> = [];
  const events: EventStore = {
    markSeen: (p: Platform, id: string, at: number) =>
      new Promise<boolean>((resolve) => answers.push(() => resolve(store.events.markSeen(p, id, at)))),
    wasSeen: (p: Platform, id: string) => store.events.wasSeen(p, id),
    prune: () => 0,
  };
  const placeLocks: PlaceLocks = {
    join(placeKey, ticket) {
      log.push(`join ${ticket.id.split('#')[0]}`);
      return {
        acquire: () => Promise.resolve({ handedOver: undefined, release: () => Promise.resolve() }),
        leave: () => log.push(`leave ${ticket.id.split('#')[0]}`),
      };
    },
  };
  const relay = createRelay({
    chat: new FakeChat('b'),
    botFor: () => 'demo-bot',
    conversations: store.conversations,
    events,
    inflight: store.inflight,
    metrics: noopMetrics,
    logger: silentLogger,
    clock,
    placeLocks,
    settings: testRelaySettings({ streamEditIntervalMs: 1000 }),
  });
  void conn.start(relay);
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
