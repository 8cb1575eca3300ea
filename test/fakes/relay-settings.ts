import { noopMetrics } from '../../src/core/metrics-port.js';
import {
  type ConversationStore,
  type EventStore,
  type FeedbackStore,
  type InFlightStore,
  systemClock,
} from '../../src/core/ports.js';
import type { BridgeMetrics } from '../../src/core/metrics-port.js';
import { createRelay, type Relay, type RelaySettings } from '../../src/core/intake/relay.js';
import { silentLogger } from '../../src/logger.js';
import { type ChatForm, createChatService } from '../../src/upstream/index.js';

/**
 * Relay settings for tests: no allowlists, limits out of the way. A test overrides what it is about.
 */
export const testRelaySettings = (over: Partial<RelaySettings> = {}): RelaySettings => ({
  streaming: true,
  sessionIdleSeconds: 86_400,
  userMessagesPerMinute: 100_000,
  maxConcurrentReplies: 64,
  streamEditIntervalMs: 100,
  allow: { slack: { workspaces: [], channels: [] }, discord: { workspaces: [], channels: [] } },
  ...over,
});

/** The real relay and upstream client over loopback, talking to an emulator, as connector tests need them. */
export function relayToEmulator(opts: {
  url: string;
  apiKey: string;
  form: ChatForm;
  store: { conversations: ConversationStore; events: EventStore; inflight: InFlightStore; feedback?: FeedbackStore };
  /** The bot every place is routed to (default the emulator's `demo-bot`). */
  botId?: string;
  /** The bot of each place (BOT_ROUTES as main.ts resolves them); default every place `botId`. */
  botFor?: (place: { platform: string; workspaceId?: string; channelId: string }) => string;
  settings?: Partial<RelaySettings>;
  metrics?: BridgeMetrics;
  /**
   * The upstream client's budgets (default 5 s each, so stall tests end soon). They are wall
   * time in the test's own process, which also runs the emulator and the fakes: a test that
   * loads that process (hundreds of streams at once) passes the product's defaults instead.
   */
  upstreamTimeouts?: { requestMs: number; streamIdleMs: number };
}): Relay {
  const chat = createChatService({
    url: opts.url,
    apiKey: opts.apiKey,
    form: opts.form,
    requestTimeoutMs: opts.upstreamTimeouts?.requestMs ?? 5000,
    streamIdleTimeoutMs: opts.upstreamTimeouts?.streamIdleMs ?? 5000,
    logger: silentLogger,
  });
  const botId = opts.botId ?? 'demo-bot';
  return createRelay({
    chat,
    botFor: opts.botFor ?? (() => botId),
    conversations: opts.store.conversations,
    events: opts.store.events,
    inflight: opts.store.inflight,
    ...(opts.store.feedback !== undefined ? { feedback: opts.store.feedback } : {}),
    metrics: opts.metrics ?? noopMetrics,
    logger: silentLogger,
    clock: systemClock,
    settings: testRelaySettings(opts.settings),
  });
}
