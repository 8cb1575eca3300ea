import { type Channel, Options, SnowflakeUtil, type SweeperOptions, type ThreadChannel } from 'discord.js';

// What discord.js keeps, bounded for months of uptime (issue 31). By default it keeps every
// thread it ever saw until the thread is archived, every user and member, and 200 messages per
// channel: with a thread per Discord conversation that grows by about 9 KB a thread, forever.
// The bridge needs none of it to answer (thread facts and writes go over REST; a thread absent
// from the cache is read once through ThreadFactsResolver, as after a restart), so:
// - a thread idle THREAD_IDLE_MS (no message, no creation) is dropped from every cache, checked
//   every 30 seconds;
// - no messages: nothing reads discord.js's message cache (events bring their message, writes
//   return theirs, history goes over REST), and 25 a channel, as before, were the largest part of
//   the retained heap in the Discord soak (4,552 messages with their collections at 2,500 places);
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
      MessageManager: 0,
      UserManager: { maxSize: MAX_PEOPLE, keepOverLimit: (u) => u.id === u.client.user.id },
      GuildMemberManager: { maxSize: MAX_PEOPLE, keepOverLimit: (m) => m.id === m.client.user.id },
    }),
    sweepers: {
      ...Options.DefaultSweeperSettings,
      threads: {
        interval: 30,
        filter: () => (thread: Channel) => thread.isThread() && now() - threadActiveAt(thread) >= THREAD_IDLE_MS,
      },
    },
  };
}
