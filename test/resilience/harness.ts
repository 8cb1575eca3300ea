import type { Logger } from 'pino';
import type { ChatService } from '../../src/core/chat-port.js';
import { openMemoryStore } from '../fakes/memory-store.js';
import { noopMetrics } from '../../src/core/metrics-port.js';
import {
  type Connector,
  type ConversationStore,
  type EventStore,
  type InFlightStore,
  systemClock,
} from '../../src/core/ports.js';
import { createRelay, type Relay, type RelaySettings } from '../../src/core/intake/relay.js';
import { type Emulator, type EmulatorOptions, startEmulator } from '../../src/emulator/index.js';
import { silentLogger } from '../../src/logger.js';
import { createChatService, type UpstreamClientOptions } from '../../src/upstream/index.js';
import { TestConnector, type TestConnectorOptions } from '../fakes/test-connector.js';
import { testRelaySettings } from '../fakes/relay-settings.js';

// The in-process bridge core for resilience tests: the real relay and upstream client against the
// real emulator over loopback, replies landing in the test connector. Retry waits are recorded and
// shortened (the waits asked for are what the tests assert), everything else runs on real time.

export const API_KEY = 'resilience-key';
export const BOT = 'demo-bot';

export interface CoreHarness {
  emu: Emulator;
  chat: ChatService;
  relay: Relay;
  conn: TestConnector;
  /** The retry waits the upstream client asked for, in ms. */
  waits: number[];
  /** Stream (A2/B2) and send (A1/B1) requests the emulator received. */
  upstreamCalls(): number;
  close(): Promise<void>;
}

export interface CoreHarnessOptions {
  form?: 'a' | 'b';
  emulator?: EmulatorOptions;
  client?: Partial<UpstreamClientOptions>;
  settings?: Partial<RelaySettings>;
  connector?: TestConnectorOptions;
  /** Real time a retry wait takes (default 1 ms, whatever was asked). */
  waitMs?: (asked: number) => number;
  /** Point the client somewhere else than the emulator (e.g. a closed port). */
  url?: string;
  logger?: Logger;
  /** Persistence (default: the in-memory store). */
  store?: { conversations: ConversationStore; events: EventStore; inflight: InFlightStore };
}

export const baseSettings = (over: Partial<RelaySettings> = {}): RelaySettings =>
  testRelaySettings({ streamEditIntervalMs: 50, maxQueuePerPlace: 10_000, ...over });

export async function startCore(opts: CoreHarnessOptions = {}): Promise<CoreHarness> {
  const form = opts.form ?? 'b';
  const emu = await startEmulator({ apiKey: API_KEY, bots: [BOT], chunkDelayMs: 2, ...opts.emulator });
  const waits: number[] = [];
  const chat = createChatService({
    url: opts.url ?? emu.url,
    apiKey: API_KEY,
    form,
    requestTimeoutMs: 5_000,
    streamIdleTimeoutMs: 5_000,
    sleep: (ms, signal) => {
      waits.push(ms);
      const real = opts.waitMs?.(ms) ?? 1;
      return new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, real);
        signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(t);
            reject(signal.reason);
          },
          { once: true },
        );
      });
    },
    ...opts.client,
  });
  const store = opts.store ?? openMemoryStore();
  const relay = createRelay({
    chat,
    botFor: () => BOT,
    conversations: store.conversations,
    events: store.events,
    inflight: store.inflight,
    metrics: noopMetrics,
    logger: opts.logger ?? silentLogger,
    clock: systemClock,
    settings: baseSettings(opts.settings),
  });
  const conn = new TestConnector({ bucketLimit: 1000, bucketWindowMs: 1000, ...opts.connector });
  await conn.start(relay);
  return {
    emu,
    chat,
    relay,
    conn,
    waits,
    upstreamCalls: () => emu.requests.filter((r) => r.endpoint === 'stream' || r.endpoint === 'send').length,
    async close() {
      await (conn as Connector).shutdown();
      await chat.close();
      await emu.close();
    },
  };
}

/** Poll `cond` (sync or async; a throw counts as "not yet") until it gives a value (not undefined/false) or the deadline passes. */
export async function waitFor<T>(
  cond: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs: number,
  /** What is awaited, for the timeout's message; a function is asked only then (to show state). */
  what: string | (() => string),
  stepMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await cond();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}${why}`);
    }
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** A small seeded PRNG for reproducible random points (the chaos runs' own). */
export { seededRandom as seeded } from '../fakes/chaos.js';
