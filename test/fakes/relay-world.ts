import { silentLogger } from '../../src/logger.js';
import { noopMetrics } from '../../src/core/metrics-port.js';
import { createRelay, type RelayDeps } from '../../src/core/intake/relay.js';
import { FakeChat } from './fake-chat.js';
import { ManualClock } from './manual-clock.js';
import { type MemoryStore, openMemoryStore } from './memory-store.js';
import { testRelaySettings } from './relay-settings.js';
import { TestConnector, type TestConnectorOptions } from './test-connector.js';

/**
 * A relay on the memory store, the fake chat (Form B) and a started test connector, under a manual
 * clock; `deps` (or what it makes of the store) replaces or adds to what the relay is built from.
 */
export function relayWorld(
  deps: Partial<RelayDeps> | ((store: MemoryStore) => Partial<RelayDeps>) = {},
  connector: Omit<TestConnectorOptions, 'clock'> = {},
) {
  const clock = new ManualClock();
  const chat = new FakeChat('b');
  const store = openMemoryStore();
  const conn = new TestConnector({ clock, bucketLimit: 50, ...connector });
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
    ...(typeof deps === 'function' ? deps(store) : deps),
  });
  void conn.start(relay);
  return { clock, chat, store, conn, relay };
}
