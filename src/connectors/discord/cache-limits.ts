import { type Channel, Options, SnowflakeUtil, type SweeperOptions, type ThreadChannel } from 'discord.js';

// What discord.js keeps, bounded for months of uptime (issue 31). By default it keeps every
// thread it ever saw until the thread is archived, every user and member, and 200 messages per
// channel: with a thread per Discord conversation that grows by about 9 KB a thread, forever.
// The bridge needs none of it to answer (thread facts and writes go over REST; a thread absent
// from the cache is read once through ThreadFactsResolver, as after a restart), so:
// - a thread idle THREAD_IDLE_MS (no message, no creation) is dropped from every cache, checked
//   every 30 seconds;
// - 25 messages per channel, dropped after 30 minutes;
// - users and members: the newest MAX_PEOPLE (names for context are best effort).

/** A thread with no message for this long is dropped from discord.js's caches. */
export const THREAD_IDLE_MS = 2 * 60_000;
const MAX_PEOPLE = 2000;

/** When a thread last saw activity: its newest message, else its creation (ms). */
export function threadActiveAt(thread: Pick<ThreadChannel, 'lastMessageId' | 'createdTimestamp'>): number {
  const last = thread.lastMessageId != null ? Number(SnowflakeUtil.timestampFrom(thread.lastMessageId)) : 0;
  return Math.max(last, thread.createdTimestamp ?? 0);
}

export function cacheLimits(now: () => number = Date.now): {
  makeCache: ReturnType<typeof Options.cacheWithLimits>;
  sweepers: SweeperOptions;
} {
  return {
    makeCache: Options.cacheWithLimits({
      ...Options.DefaultMakeCacheSettings,
      MessageManager: 25,
      UserManager: { maxSize: MAX_PEOPLE, keepOverLimit: (u) => u.id === u.client.user.id },
      GuildMemberManager: { maxSize: MAX_PEOPLE, keepOverLimit: (m) => m.id === m.client.user.id },
    }),
    sweepers: {
      ...Options.DefaultSweeperSettings,
      messages: { interval: 3600, lifetime: 1800 },
      threads: {
        interval: 30,
        filter: () => (thread: Channel) => thread.isThread() && now() - threadActiveAt(thread) >= THREAD_IDLE_MS,
      },
    },
  };
}
