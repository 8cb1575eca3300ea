// Discord's sharding rule, for the fake gateway: a guild belongs to shard
// `(guild_id >> 22) % shard_count`; events outside any guild (DMs) go to shard 0.

/** [shard id, shard count], as in IDENTIFY's and READY's `shard` field. */
export type ShardPair = [number, number];

export function shardOf(guildId: string, shardCount: number): number {
  return Number((BigInt(guildId) >> 22n) % BigInt(shardCount));
}

// Events whose payload is the guild itself: its id is `id`, not `guild_id`.
const GUILD_PAYLOAD = new Set(['GUILD_CREATE', 'GUILD_UPDATE', 'GUILD_DELETE']);

/** The guild a dispatch belongs to, or undefined for events outside guilds (DMs). */
export function dispatchGuildId(t: string, d: Record<string, unknown>): string | undefined {
  const id = GUILD_PAYLOAD.has(t) ? d.id : d.guild_id;
  return typeof id === 'string' ? id : undefined;
}
