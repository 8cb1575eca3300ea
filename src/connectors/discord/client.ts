import { Client, GatewayIntentBits, Partials } from 'discord.js';
import { cacheLimits } from './cache-limits.js';
import type { DiscordConfig } from '../../config/config.js';
import type { DiscordRateLimitFeed } from './rate-limits.js';
import { messageWritesWithoutRetry } from './server-errors.js';

// The discord.js client, configured once: the intents the bridge needs (MessageContent is
// privileged and must be enabled in the developer portal), partials so DMs arrive, no mention
// parsing anywhere, REST pointed at DISCORD_API_URL, and the shards this replica runs
// (discord.js's internal sharding: all of them in this one process, no child processes).

export function createDiscordClient(config: DiscordConfig, feed: DiscordRateLimitFeed): Client {
  return new Client({
    ...shardOptions(config),
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.MessageContent,
      GatewayIntentBits.DirectMessages,
    ],
    // DM channels are not cached before their first message; without Channel partials
    // discord.js drops DMs silently.
    partials: [Partials.Channel, Partials.Message],
    allowedMentions: { parse: [] },
    // A bridge runs for months in many channels and threads: bounded caches (cache-limits.ts).
    ...cacheLimits(),
    rest: {
      api: config.apiUrl,
      // 5xx and resets: one retry here for other routes; a reply's message writes get none here
      // (their 5xx is thrown past discord.js, server-errors.ts) and are retried by the scheduler.
      retries: 1,
      makeRequest: messageWritesWithoutRetry(feed),
      // A request queue per channel and thread: swept every minute once idle, not every hour
      // (a thread per conversation made hundreds an hour stay).
      handlerSweepInterval: 60_000,
      timeout: 15_000,
      // Reply writes must surface their 429s to the bridge's scheduler instead of queueing.
      rejectOnRateLimit: (data) => feed.shouldReject(data),
    },
  });
}

/**
 * DISCORD_SHARD_COUNT/IDS as discord.js options. Unset: 'auto', the count Discord recommends in
 * GET /gateway/bot and every shard of it (one shard for most bots).
 */
export function shardOptions(config: DiscordConfig): { shards: number[] | 'auto'; shardCount?: number } {
  if (config.shards === undefined) return { shards: 'auto' };
  return { shards: [...config.shards.ids], shardCount: config.shards.count };
}
