// DISCORD_SHARD_COUNT and DISCORD_SHARD_IDS together: which gateway shards this replica runs.
// Each variable's own format is checked in env-schema.ts; here, what only both together say.

/** The shards of a bot, and those this replica runs. Absent from the config: Discord's recommendation, all. */
export interface DiscordShards {
  /** DISCORD_SHARD_COUNT: the bot's total shard count, the same on every replica. */
  count: number;
  /** DISCORD_SHARD_IDS: the shard ids this replica connects, ascending; default all of 0..count-1. */
  ids: number[];
}

export type ShardsResult = { ok: true; shards: DiscordShards | undefined } | { ok: false; problem: string };

export function resolveDiscordShards(count: number | undefined, ids: number[] | undefined): ShardsResult {
  if (count === undefined) {
    if (ids === undefined) return { ok: true, shards: undefined };
    // Without the count, "shard 1" means nothing: the count Discord recommends can change between
    // replicas' starts, and two replicas with different counts split the guilds differently.
    return {
      ok: false,
      problem:
        'DISCORD_SHARD_IDS: needs DISCORD_SHARD_COUNT (the total shard count, the same on every replica) to be set too',
    };
  }
  if (ids === undefined) return { ok: true, shards: { count, ids: Array.from({ length: count }, (_, i) => i) } };
  const outside = ids.filter((id) => id >= count);
  if (outside.length > 0) {
    return {
      ok: false,
      problem: `DISCORD_SHARD_IDS: shard ids must be below DISCORD_SHARD_COUNT (${count}), so from 0 to ${count - 1}; got ${outside.join(', ')}`,
    };
  }
  return { ok: true, shards: { count, ids: [...ids].sort((a, b) => a - b) } };
}
