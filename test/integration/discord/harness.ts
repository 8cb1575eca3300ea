import pino from 'pino';
import type { DiscordReplyMode, DiscordShards } from '../../../src/config/config.js';
import { createDiscordConnector, type DiscordConnector } from '../../../src/connectors/discord/index.js';
import type {
  HandleResult,
  IncomingMessage,
  MessageHandler,
  Place,
  RateLimitInfo,
  RateLimitObserver,
} from '../../../src/core/ports.js';
import { type Logger, silentLogger } from '../../../src/logger.js';
import { type FakeDiscord, type FakeDiscordOptions, startFakeDiscord } from '../../fakes/discord/index.js';
import { assertNoPings } from '../../fakes/discord/writes.js';

// A fake Discord with one guild and channel, and a connector logged into it. Shared by the
// Discord integration tests.

export class RecordingObserver implements RateLimitObserver {
  readonly observed: RateLimitInfo[] = [];
  readonly limitedCalls: { bucket: string; retryAfterMs: number }[] = [];
  observe(info: RateLimitInfo): void {
    this.observed.push(info);
  }
  limited(bucket: string, retryAfterMs: number): void {
    this.limitedCalls.push({ bucket, retryAfterMs });
  }
}

/** A stand-in for the relay: answers "You said: <text>" with a post and an edit, remembers what it saw. */
export class EchoHandler implements MessageHandler {
  readonly seen: IncomingMessage[] = [];
  readonly resets: Place[] = [];
  private readonly done = new Set<string>();

  async handle(msg: IncomingMessage): Promise<HandleResult> {
    if (this.done.has(msg.eventId)) return { status: 'duplicate' };
    this.done.add(msg.eventId);
    this.seen.push(msg);
    if (msg.text === '') return { status: 'ignored' };
    await msg.sink.showWorking();
    const full = `You said: ${msg.text}`;
    const first = await msg.sink.post(full.slice(0, 5), { final: false, part: 0 });
    await msg.sink.edit(first.messageId, full, { final: true, part: 0 });
    await msg.sink.clearWorking();
    return { status: 'answered' };
  }

  async reset(place: Place): Promise<void> {
    this.resets.push(place);
  }
}

export interface Harness {
  fake: FakeDiscord;
  connector: DiscordConnector;
  guildId: string;
  channelId: string;
  observer: RecordingObserver;
  close(): Promise<void>;
}

export interface ConnectOptions {
  replyMode?: DiscordReplyMode;
  observer?: RateLimitObserver;
  assumedBudget?: { limit: number; windowMs: number };
  attachmentMaxBytes?: number;
  /** DISCORD_SHARD_COUNT/IDS (default: Discord's recommendation, all shards). */
  shards?: DiscordShards;
  logger?: Logger;
}

/** A started connector logged into `fake` (call again for a "restarted" bridge). */
export async function connectTo(
  fake: FakeDiscord,
  handler: MessageHandler,
  opts: ConnectOptions = {},
): Promise<DiscordConnector> {
  const connector = createDiscordConnector({
    config: {
      botToken: fake.token,
      apiUrl: fake.apiUrl,
      replyMode: opts.replyMode ?? 'thread',
      allowedGuilds: [],
      allowedChannels: [],
      ...(opts.shards ? { shards: opts.shards } : {}),
    },
    logger: opts.logger ?? (process.env.DISCORD_TEST_LOG ? pino({ level: 'debug' }) : silentLogger),
    ...(opts.observer ? { rateLimits: opts.observer } : {}),
    ...(opts.assumedBudget ? { assumedBudget: opts.assumedBudget } : {}),
    ...(opts.attachmentMaxBytes !== undefined ? { attachmentMaxBytes: opts.attachmentMaxBytes } : {}),
  });
  await connector.start(handler);
  return connector;
}

export async function startHarness(
  handler: MessageHandler,
  opts: { replyMode?: DiscordReplyMode; fake?: FakeDiscordOptions } = {},
): Promise<Harness> {
  const fake = await startFakeDiscord(opts.fake);
  const guildId = fake.addGuild('test guild');
  const channelId = fake.addChannel(guildId, 'general');
  const observer = new RecordingObserver();
  const connector = await connectTo(fake, handler, {
    observer,
    ...(opts.replyMode ? { replyMode: opts.replyMode } : {}),
  });
  const harness: Harness = {
    fake,
    connector,
    guildId,
    channelId,
    observer,
    async close() {
      await harness.connector.shutdown();
      await fake.close();
      // The shared check over every write the bot made in the test.
      assertNoPings(fake.record);
    },
  };
  return harness;
}

export const mention = (fake: FakeDiscord, text: string) => `<@${fake.botUser.id}> ${text}`;

/** Hands each message to the test instead of answering it. */
export class CapturingHandler implements MessageHandler {
  private readonly queue: IncomingMessage[] = [];
  private waiter: ((m: IncomingMessage) => void) | undefined;
  readonly resets: Place[] = [];

  async handle(msg: IncomingMessage): Promise<HandleResult> {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w(msg);
    } else this.queue.push(msg);
    return { status: 'answered' };
  }

  async reset(place: Place): Promise<void> {
    this.resets.push(place);
  }

  next(timeoutMs = 10_000): Promise<IncomingMessage> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no message reached the handler')), timeoutMs);
      this.waiter = (m) => {
        clearTimeout(timer);
        resolve(m);
      };
    });
  }
}
