import { expect, it } from 'vitest';
import { FakeChat } from '../../test/fakes/fake-chat.js';
import { ManualClock } from '../../test/fakes/manual-clock.js';
import { openMemoryStore } from '../../test/fakes/memory-store.js';
import { testRelaySettings } from '../../test/fakes/relay-settings.js';
import { TestConnector } from '../../test/fakes/test-connector.js';
import { silentLogger } from '../logger.js';
import { noopMetrics } from './metrics-port.js';
import type { Place } from './ports.js';
import { createRelay } from './relay.js';
import { MESSAGES } from './user-messages.js';

// A Stop that names the place (Slack's agent-session Stop): the reply being written there, by the
// same rules as a Stop on the reply's key.

it('stopPlace stops the reply in the place for its asker only; elsewhere and afterwards nothing', async () => {
  const clock = new ManualClock();
  const chat = new FakeChat('b');
  const store = openMemoryStore();
  const conn = new TestConnector({ clock, bucketLimit: 50 });
  const relay = createRelay({
    chat,
    botFor: () => 'demo-bot',
    conversations: store.conversations,
    events: store.events,
    inflight: store.inflight,
    metrics: noopMetrics,
    logger: silentLogger,
    clock,
    settings: testRelaySettings({ streamEditIntervalMs: 1000 }),
  });
  void conn.start(relay);
  let open: () => void = () => {};
  const held = new Promise<void>((r) => (open = r));
  chat.script = () => ({ chunks: ['Started', ' never'], gate: held });
  const place: Place = { platform: 'test', channelId: 'C1' };

  expect(await relay.stopPlace(place, 'U1')).toBe('not_found');
  const reply = conn.send({ text: 'slow', userId: 'U1' });
  let done = false;
  void reply.finally(() => (done = true));
  await clock.advanceUntil(() => conn.writes.length > 0, 60_000, 100);
  expect(await relay.stopPlace({ ...place, channelId: 'C2' }, 'U1')).toBe('not_found');
  expect(await relay.stopPlace(place, 'U2')).toBe('not_owner');
  expect(await relay.stopPlace(place, 'U1')).toBe('stopped');
  await clock.advanceUntil(() => done, 60_000, 100);
  expect(await reply).toEqual({ status: 'answered' });
  expect(conn.contentsIn('C1')).toEqual([`Started${MESSAGES.stopped}`]);
  expect(chat.cancelled).toBe(1);
  expect(await relay.stopPlace(place, 'U1')).toBe('not_found');
  open();
});
