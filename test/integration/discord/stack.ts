import type { ChatForm, OpenAiOptions } from '../../../src/upstream/index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { DiscordReplyMode } from '../../../src/config/config.js';
import type { DiscordConnector } from '../../../src/connectors/discord/index.js';
import type { BridgeMetrics } from '../../../src/core/metrics-port.js';
import type { ChatService } from '../../../src/core/chat-port.js';
import type { Relay, RelaySettings } from '../../../src/core/intake/relay.js';
import { type Emulator, startEmulator } from '../../../src/emulator/index.js';
import { openStore, type SqliteStore } from '../../../src/store/sqlite/index.js';
import {
  type DispatchMessageInput,
  type FakeDiscord,
  type FakeDiscordOptions,
  startFakeDiscord,
} from '../../fakes/discord/index.js';
import { assertNoPings } from '../../fakes/discord/writes.js';
import { connectTo, mention } from './harness.js';
import { relayToEmulator } from '../../fakes/relay-settings.js';
import { faultyStore, storeFaultsFromEnv, type StoreFaults } from '../../store/faulty-store.js';

// The whole bridge for Discord, as src/main.ts wires it: fake Discord ⇄ discord.js connector ⇄
// relay (SQLite store) ⇄ upstream client ⇄ emulator. `restart()` replaces the bridge half
// (store reopened from the same file, new relay, new discord.js client) and keeps the fakes.

export interface StackOptions {
  replyMode?: DiscordReplyMode;
  /** The upstream form (default b); an OpenAI-compatible one gets an emulator serving `all`. */
  form?: ChatForm;
  /** The OpenAI-compatible forms' settings. */
  openAi?: OpenAiOptions;
  fake?: FakeDiscordOptions;
  chunkDelayMs?: number;
  editIntervalMs?: number;
  assumedBudget?: { limit: number; windowMs: number };
  /** Relay settings a test is about (e.g. context). */
  relaySettings?: Partial<RelaySettings>;
  /** ATTACHMENT_MAX_BYTES for the connector. */
  attachmentMaxBytes?: number;
  /** The relay's metrics (default none). */
  metrics?: BridgeMetrics;
  /** The upstream, in place of the real client to the emulator (a scripted agent stream). */
  chat?: ChatService;
  /** The store fault mode: the relay's store calls fail while these say so (test/store/faulty-store.ts). */
  storeFaults?: StoreFaults;
  /** REPLY_FILE_MAX_BYTES: the largest inline file the upstream client keeps. */
  maxFileBytes?: number;
}

export interface Stack {
  fake: FakeDiscord;
  emu: Emulator;
  guildId: string;
  channelId: string;
  store: SqliteStore;
  relay: Relay;
  connector: DiscordConnector;
  /** Upstream chat calls (send or stream), in order. */
  chatRequests(): Emulator['requests'];
  /**
   * Ann (or `extra.authorId`) mentions the bot in the stack's channel (or `extra.channelId`):
   * the message dispatched, and the reply's thread in thread mode (the message's id).
   */
  ask(text: string, extra?: Partial<DispatchMessageInput>): { message: Record<string, unknown>; threadId: string };
  /** Ann (or `extra.authorId`) writes to the bot in a DM: the DM channel's id. */
  dm(extra: Omit<DispatchMessageInput, 'channelId' | 'authorId'> & { authorId?: string }): string;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export const API_KEY = 'test-key';
export const BOT = 'demo-bot';
/** The users who write to the bot in the tests. */
export const ANN = '200000000000000001';
export const BOB = '200000000000000002';

/** A reply's message once its final write took its Stop button away (until then it may still grow). */
export const replyEnded = (m: { components: unknown[] }) => !JSON.stringify(m.components).includes('"Stop"');

/** A test file's stacks: `start` starts one, closed after the test that started it. */
export function stackPerTest(): (opts?: StackOptions) => Promise<Stack> {
  let current: Stack | undefined;
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return async (opts) => (current = await startStack(opts));
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-discord-'));
  const dbPath = join(dir, 'bridge.db');
  // Discord's 5 per 5 s, compressed to 5 per 2 s so streamed tests stay quick; same shape.
  const budget = opts.assumedBudget ?? opts.fake?.rateLimit ?? { limit: 5, windowMs: 2000 };
  const fake = await startFakeDiscord({ ...opts.fake, rateLimit: opts.fake?.rateLimit ?? budget });
  const emu = await startEmulator({
    apiKey: API_KEY,
    bots: [BOT],
    chunkDelayMs: opts.chunkDelayMs ?? 2,
    ...(opts.form === 'chat-completions' || opts.form === 'responses' ? { form: 'all' as const } : {}),
  });
  const guildId = fake.addGuild('guild');
  const channelId = fake.addChannel(guildId, 'general');

  const bridge = async () => {
    const store = openStore(dbPath);
    const relay = relayToEmulator({
      url: emu.url,
      apiKey: API_KEY,
      form: opts.form ?? 'b',
      store: withFaults(store, opts.storeFaults ?? storeFaultsFromEnv()),
      botId: BOT,
      ...(opts.openAi !== undefined ? { openAi: opts.openAi } : {}),
      ...(opts.metrics !== undefined ? { metrics: opts.metrics } : {}),
      ...(opts.chat !== undefined ? { chat: opts.chat } : {}),
      ...(opts.maxFileBytes !== undefined ? { maxFileBytes: opts.maxFileBytes } : {}),
      settings: {
        userMessagesPerMinute: 100,
        streamEditIntervalMs: opts.editIntervalMs ?? 100,
        ...opts.relaySettings,
      },
    });
    const connector = await connectTo(fake, relay, {
      replyMode: opts.replyMode ?? 'thread',
      observer: relay.rateLimits,
      assumedBudget: budget,
      ...(opts.attachmentMaxBytes !== undefined ? { attachmentMaxBytes: opts.attachmentMaxBytes } : {}),
    });
    return { store, relay, connector };
  };

  const stop = async (s: { store: SqliteStore; relay: Relay; connector: DiscordConnector }) => {
    await s.connector.shutdown();
    await s.relay.drain(2000);
    await s.store.close();
  };

  const first = await bridge();
  const stack: Stack = {
    fake,
    emu,
    guildId,
    channelId,
    ...first,
    chatRequests: () => emu.requests.filter((r) => r.endpoint === 'stream' || r.endpoint === 'send'),
    ask(text, extra = {}) {
      const message = fake.dispatchMessage({
        channelId,
        authorId: ANN,
        content: mention(fake, text),
        mentionsBot: true,
        ...extra,
      });
      return { message, threadId: String(message.id) };
    },
    dm({ authorId = ANN, ...rest }) {
      const dm = fake.addDm(authorId);
      fake.dispatchMessage({ channelId: dm, authorId, ...rest });
      return dm;
    },
    async restart() {
      await stop(stack);
      Object.assign(stack, await bridge());
    },
    async close() {
      await stop(stack);
      await emu.close();
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
      // The shared check over every write the bot made in the test (after the fakes are down).
      assertNoPings(fake.record);
    },
  };
  return stack;
}

/** The store as the relay sees it: through the store fault mode when it is on (test/store/faulty-store.ts). */
function withFaults<T extends object>(store: T, faults: StoreFaults | undefined): T {
  return faults === undefined ? store : faultyStore(store, faults);
}
