import { envSchema } from '../../src/config/env-schema.js';
import { noopMetrics } from '../../src/core/metrics-port.js';
import {
  type ConversationStore,
  type EventStore,
  type FeedbackStore,
  type InFlightStore,
  systemClock,
  type TranscriptStore,
} from '../../src/core/ports.js';
import type { BridgeMetrics } from '../../src/core/metrics-port.js';
import { createRelay, type Relay, type RelaySettings } from '../../src/core/intake/relay.js';
import { silentLogger } from '../../src/logger.js';
import type { StoreHealthSource } from '../../src/core/store-errors.js';
import { type ChatForm, createChatService, type OpenAiOptions } from '../../src/upstream/index.js';
import type { ChatService } from '../../src/core/chat-port.js';

/**
 * CHAT_REQUEST_TIMEOUT_MS and CHAT_STREAM_IDLE_TIMEOUT_MS as a deployment gets them by default:
 * the budgets a test passes when it loads its own process (the emulator answers in it too).
 */
const envDefaults = envSchema.parse({});
export const PRODUCT_UPSTREAM_TIMEOUTS = {
  requestMs: envDefaults.CHAT_REQUEST_TIMEOUT_MS,
  streamIdleMs: envDefaults.CHAT_STREAM_IDLE_TIMEOUT_MS,
} as const;

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
  store: {
    conversations: ConversationStore;
    events: EventStore;
    inflight: InFlightStore;
    feedback?: FeedbackStore;
    /** Chat Completions' transcripts, as main.ts hands the store's over. */
    transcripts?: TranscriptStore;
    /** A store that watches its health (SQLite, PostgreSQL, the faulty wrapper): the relay's storeHealth. */
    health?: StoreHealthSource['health'];
    onHealthChange?: StoreHealthSource['onHealthChange'];
  };
  /** The OpenAI-compatible forms' settings (system prompt, extra fields, transcript bounds). */
  openAi?: OpenAiOptions;
  /** The bot every place is routed to (default the emulator's `demo-bot`). */
  botId?: string;
  /** The bot of each place (BOT_ROUTES as main.ts resolves them); default every place `botId`. */
  botFor?: (place: { platform: string; workspaceId?: string; channelId: string }) => string;
  settings?: Partial<RelaySettings>;
  metrics?: BridgeMetrics;
  /** A chat service in place of the real client to the emulator (a scripted agent stream). */
  chat?: ChatService;
  /**
   * The upstream client's budgets (default 5 s each, so stall tests end soon). They are wall
   * time in the test's own process, which also runs the emulator and the fakes: a test that
   * loads that process (hundreds of streams at once) passes the product's defaults instead.
   */
  upstreamTimeouts?: { requestMs: number; streamIdleMs: number };
  /** REPLY_FILE_MAX_BYTES as main.ts hands it to the client (default the client's, 8 MiB). */
  maxFileBytes?: number;
}): Relay {
  const chat =
    opts.chat ??
    createChatService({
      url: opts.url,
      apiKey: opts.apiKey,
      form: opts.form,
      requestTimeoutMs: opts.upstreamTimeouts?.requestMs ?? 5000,
      streamIdleTimeoutMs: opts.upstreamTimeouts?.streamIdleMs ?? 5000,
      logger: silentLogger,
      ...(opts.maxFileBytes !== undefined ? { maxFileBytes: opts.maxFileBytes } : {}),
      openAi: {
        ...opts.openAi,
        ...(opts.store.transcripts !== undefined ? { transcripts: opts.store.transcripts } : {}),
      },
    });
  const botId = opts.botId ?? 'demo-bot';
  return createRelay({
    chat,
    botFor: opts.botFor ?? (() => botId),
    conversations: opts.store.conversations,
    events: opts.store.events,
    inflight: opts.store.inflight,
    ...(opts.store.feedback !== undefined ? { feedback: opts.store.feedback } : {}),
    ...storeHealthOf(opts.store),
    metrics: opts.metrics ?? noopMetrics,
    logger: silentLogger,
    clock: systemClock,
    settings: testRelaySettings(opts.settings),
  });
}

/** The relay's storeHealth, when the store watches its own (as main.ts passes it). */
function storeHealthOf(store: {
  health?: StoreHealthSource['health'];
  onHealthChange?: StoreHealthSource['onHealthChange'];
}): { storeHealth?: StoreHealthSource } {
  const { health, onHealthChange } = store;
  if (health === undefined || onHealthChange === undefined) return {};
  return { storeHealth: { health: () => health.call(store), onHealthChange: (l) => onHealthChange.call(store, l) } };
}
