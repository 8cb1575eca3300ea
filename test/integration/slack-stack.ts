import type { SlackConfig, SlackStreaming } from '../../src/config/config.js';
import { createSlackConnector, type SlackConnector } from '../../src/connectors/slack/connector.js';
import type { SlackLimits } from '../../src/connectors/slack/rate-limits.js';
import type { BridgeMetrics } from '../../src/core/metrics-port.js';
import type { ChatService } from '../../src/core/chat-port.js';
import type { HandleResult, IncomingMessage, MessageHandler, Place, StopResult } from '../../src/core/ports.js';
import type { Relay, RelaySettings } from '../../src/core/intake/relay.js';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { type Logger, silentLogger } from '../../src/logger.js';
import { openStore, type SqliteStore } from '../../src/store/sqlite/index.js';
import { type FakeSlack, type FakeSlackOptions, startFakeSlack } from '../fakes/slack/index.js';
import { assertNoSlackPings } from '../fakes/slack/mention-check.js';
import { type MiniServer, slackConfig, startMiniServer } from './slack-helpers.js';
import { relayToEmulator } from '../fakes/relay-settings.js';
import { startTimingProxy, type TimingProxy } from '../fakes/timing-proxy.js';
import type { ChatForm, OpenAiOptions } from '../../src/upstream/index.js';
import { faultyStore, storeFaultsFromEnv, type StoreFaults } from '../store/faulty-store.js';

// The whole bridge for Slack, wired as src/main.ts does: fake Slack ⇄ Bolt connector ⇄ relay
// (SQLite) ⇄ upstream client ⇄ emulator. `settled(n)` resolves when the relay finished n
// messages (answered or refused), so tests await the end of a reply instead of sleeping.

export interface SlackStackOptions {
  mode?: 'socket' | 'http';
  streaming?: SlackStreaming;
  fake?: FakeSlackOptions;
  limits?: Partial<SlackLimits>;
  chunkDelayMs?: number;
  editIntervalMs?: number;
  /** The upstream form (default b); an OpenAI-compatible one gets an emulator serving `all`. */
  form?: ChatForm;
  /** The OpenAI-compatible forms' settings. */
  openAi?: OpenAiOptions;
  /** Relay settings a test is about (e.g. context). */
  relaySettings?: Partial<RelaySettings>;
  /** ATTACHMENT_MAX_BYTES for the connector. */
  attachmentMaxBytes?: number;
  /** Other relay settings (e.g. maxConcurrentReplies for many replies at once). */
  relay?: Partial<RelaySettings>;
  /**
   * Puts a timing proxy between the upstream client and the emulator that notes when each
   * reply's stream ended; replies are keyed by `tag-<id>` in the user's message.
   */
  timeUpstream?: boolean;
  /**
   * How long the Socket Mode client waits for a ping's answer (default 500 ms, so tests about
   * lost connections end soon; the product leaves Bolt's default of 5 s).
   */
  socketPingTimeoutMs?: number;
  /** The upstream client's timeouts (default 5 s each; see relayToEmulator). */
  upstreamTimeouts?: { requestMs: number; streamIdleMs: number };
  /** The relay's metrics (default none). */
  metrics?: BridgeMetrics;
  /** The connector's logger (default silent). */
  logger?: Logger;
  /** Connector config a test is about (allowlists). */
  slack?: Partial<SlackConfig>;
  /** Routes (BOT_ROUTES as main.ts builds them), with the emulator's other bots in `bots`. */
  botFor?: (place: { platform: string; workspaceId?: string; channelId: string }) => string;
  bots?: string[];
  /** The emulator's longest accepted message (its default is 4,000). */
  maxMessageChars?: number;
  /** The upstream, in place of the real client to the emulator (a scripted agent stream). */
  chat?: ChatService;
  /** The store fault mode: the relay's store calls fail while these say so (test/store/faulty-store.ts). */
  storeFaults?: StoreFaults;
  /** REPLY_FILE_MAX_BYTES: the largest inline file the upstream client keeps. */
  maxFileBytes?: number;
}

export interface SlackStack {
  fake: FakeSlack;
  emu: Emulator;
  store: SqliteStore;
  relay: Relay;
  connector: SlackConnector;
  server: MiniServer;
  eventsUrl: string;
  results: HandleResult[];
  /** Stops by place (Slack's agent-session Stop) the connector asked of the relay: results, and when. */
  placeStops: { place: Place; userId: string; result: StopResult; at: number }[];
  settled(n: number): Promise<HandleResult[]>;
  /** When each tagged reply's upstream stream started and ended (with `timeUpstream`). */
  upstream: TimingProxy | undefined;
  /** Upstream chat calls (send or stream). */
  chatRequests(): Emulator['requests'];
  close(): Promise<void>;
}

export const API_KEY = 'test-key';
export const BOT = 'demo-bot';
/** How a user's message names its reply for `timeUpstream`: `tag-<id>`. */
export const TAG_PATTERN = /\btag-([A-Za-z0-9_-]+)/;

export async function startSlackStack(opts: SlackStackOptions = {}): Promise<SlackStack> {
  const fake = await startFakeSlack(opts.fake);
  const emu = await startEmulator({
    apiKey: API_KEY,
    bots: [BOT, ...(opts.bots ?? [])],
    chunkDelayMs: opts.chunkDelayMs ?? 2,
    ...(opts.form === 'chat-completions' || opts.form === 'responses' ? { form: 'all' as const } : {}),
    ...(opts.maxMessageChars !== undefined ? { maxMessageChars: opts.maxMessageChars } : {}),
  });
  const server = await startMiniServer();
  const upstream = opts.timeUpstream ? await startTimingProxy(emu.url, { tagPattern: TAG_PATTERN }) : undefined;
  const store = openStore(':memory:');
  const relay = relayToEmulator({
    url: upstream?.url ?? emu.url,
    apiKey: API_KEY,
    form: opts.form ?? 'b',
    store: withFaults(store, opts.storeFaults ?? storeFaultsFromEnv()),
    botId: BOT,
    ...(opts.openAi !== undefined ? { openAi: opts.openAi } : {}),
    ...(opts.botFor !== undefined ? { botFor: opts.botFor } : {}),
    ...(opts.metrics !== undefined ? { metrics: opts.metrics } : {}),
    ...(opts.chat !== undefined ? { chat: opts.chat } : {}),
    ...(opts.maxFileBytes !== undefined ? { maxFileBytes: opts.maxFileBytes } : {}),
    ...(opts.upstreamTimeouts !== undefined ? { upstreamTimeouts: opts.upstreamTimeouts } : {}),
    settings: {
      userMessagesPerMinute: 1000,
      streamEditIntervalMs: opts.editIntervalMs ?? 100,
      ...opts.relaySettings,
      ...opts.relay,
    },
  });
  const results: HandleResult[] = [];
  const placeStops: SlackStack['placeStops'] = [];
  let waiters: { n: number; resolve: () => void }[] = [];
  const tracked: MessageHandler = {
    async handle(msg: IncomingMessage) {
      const r = await relay.handle(msg);
      results.push(r);
      for (const w of waiters.filter((x) => results.length >= x.n)) w.resolve();
      waiters = waiters.filter((x) => results.length < x.n);
      return r;
    },
    reset: (place) => relay.reset(place),
    stop: (key, user) => relay.stop(key, user),
    async stopPlace(place, userId) {
      const result = await relay.stopPlace(place, userId);
      placeStops.push({ place, userId, result, at: Date.now() });
      return result;
    },
    vote: (key, user, vote) => relay.vote(key, user, vote),
  };
  const config = slackConfig(fake, {
    streaming: opts.streaming ?? 'edit',
    ...(opts.mode === 'http' ? { appToken: undefined } : {}),
    ...opts.slack,
  });
  const connector = createSlackConnector({
    config,
    logger: opts.logger ?? silentLogger,
    rateLimits: relay.rateLimits,
    http: server,
    socketPingTimeoutMs: opts.socketPingTimeoutMs ?? 500,
    ...(opts.limits ? { limits: opts.limits } : {}),
    ...(opts.attachmentMaxBytes !== undefined ? { attachmentMaxBytes: opts.attachmentMaxBytes } : {}),
  });
  await connector.start(tracked);
  if (opts.mode !== 'http') await fake.waitConnected();
  return {
    fake,
    emu,
    store,
    relay,
    connector,
    server,
    eventsUrl: `${server.url}/slack/events`,
    results,
    placeStops,
    upstream,
    settled(n) {
      if (results.length >= n) return Promise.resolve(results);
      return new Promise((resolve) => waiters.push({ n, resolve: () => resolve(results) }));
    },
    chatRequests: () => emu.requests.filter((r) => r.endpoint === 'stream' || r.endpoint === 'send'),
    async close() {
      await connector.shutdown();
      await relay.drain(2000);
      await store.close();
      await server.close();
      await upstream?.close();
      await emu.close();
      await fake.close();
      // The shared check over every write the bot made in the test (after the fakes are down).
      assertNoSlackPings(fake.calls);
    },
  };
}

/** The store as the relay sees it: through the store fault mode when it is on (test/store/faulty-store.ts). */
function withFaults<T extends object>(store: T, faults: StoreFaults | undefined): T {
  return faults === undefined ? store : faultyStore(store, faults);
}
