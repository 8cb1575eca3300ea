import { afterEach, describe, expect, it } from 'vitest';
import type { DiscordShards } from '../../src/config/config.js';
import { createDiscordConnector, type DiscordConnector } from '../../src/connectors/discord/index.js';
import { readinessFrom } from '../../src/server/readiness.js';
import { type FakeDiscord, shardOf, startFakeDiscord } from '../fakes/discord/index.js';
import { assertNoPings } from '../fakes/discord/writes.js';
import { LogLines } from '../support/log-lines.js';
import { connectTo, EchoHandler, mention } from './discord/harness.js';

// Discord sharding with discord.js's own shards (one process, no child processes), against the
// fake gateway that routes each guild's events to shard (guild_id >> 22) % count and DMs to
// shard 0, as Discord does.

const USER = '100000000000000001';

let fake: FakeDiscord | undefined;
const connectors: DiscordConnector[] = [];
afterEach(async () => {
  for (const c of connectors.splice(0)) await c.shutdown();
  await fake?.close();
  const record = fake?.record ?? [];
  fake = undefined;
  assertNoPings(record);
});

/** A guild whose id belongs to `shard` of `count`, with one text channel. */
function guildOnShard(f: FakeDiscord, shard: number, count: number): { guildId: string; channelId: string } {
  const guildId = f.addGuild(`guild on shard ${shard}`, { shard, count });
  expect(shardOf(guildId, count)).toBe(shard);
  return { guildId, channelId: f.addChannel(guildId, 'general') };
}

/** A mention in a channel (inline mode: answered in the channel); resolves with the bot's answer. */
async function ask(f: FakeDiscord, channelId: string, text: string, mentionBot = true): Promise<void> {
  f.dispatchMessage({
    channelId,
    authorId: USER,
    content: mentionBot ? mention(f, text) : text,
    mentionsBot: mentionBot,
  });
  await f.waitUntil(
    () => f.botMessages(channelId).some((m) => m.content === `You said: ${text}`),
    15_000,
    `the answer to "${text}"`,
  );
}

const answersTo = (f: FakeDiscord, channelId: string, text: string) =>
  f.botMessages(channelId).filter((m) => m.content === `You said: ${text}`).length;

const texts = (h: EchoHandler) => h.seen.map((m) => m.text).sort();

/** A connector that is not started yet (to watch its start). */
function unstarted(f: FakeDiscord, shards: DiscordShards, logs: LogLines): DiscordConnector {
  const connector = createDiscordConnector({
    config: {
      botToken: f.token,
      apiUrl: f.apiUrl,
      replyMode: 'inline',
      allowedGuilds: [],
      allowedChannels: [],
      shards,
    },
    logger: logs.logger,
  });
  connectors.push(connector);
  return connector;
}

describe('Discord sharding', () => {
  it('two replicas running shard 0 and shard 1 of 2: each guild answered once, by its shard; DMs by shard 0', async () => {
    const f = (fake = await startFakeDiscord());
    const a = guildOnShard(f, 0, 2);
    const b = guildOnShard(f, 1, 2);
    const dm = f.addDm(USER);

    const zero = new EchoHandler();
    const one = new EchoHandler();
    const logs0 = new LogLines();
    const logs1 = new LogLines();
    const shards = (ids: number[]) => ({ count: 2, ids });
    connectors.push(await connectTo(f, zero, { replyMode: 'inline', shards: shards([0]), logger: logs0.logger }));
    connectors.push(await connectTo(f, one, { replyMode: 'inline', shards: shards([1]), logger: logs1.logger }));
    expect(f.gateway.connectedShards()).toEqual([
      [0, 2],
      [1, 2],
    ]);
    // Each replica knows only its own shard's guilds.
    expect(logs0.find('discord: connected')[0]).toMatchObject({ shards: [0], shardCount: 2, guilds: 1 });
    expect(logs1.find('discord: connected')[0]).toMatchObject({ shards: [1], shardCount: 2, guilds: 1 });
    expect(logs1.find('discord: shard ready')[0]).toMatchObject({ shard: 1, shardCount: 2 });

    // A guild the bot joins while running: its GUILD_CREATE reaches only its shard.
    const c = guildOnShard(f, 1, 2);

    await ask(f, a.channelId, 'in guild a');
    await ask(f, b.channelId, 'in guild b');
    await ask(f, c.channelId, 'in guild c');
    await ask(f, dm, 'in a DM', false);
    // Barriers: a gateway connection keeps its order, so once these are answered, any event the
    // fake had wrongly sent to the other replica would have reached its handler already.
    await ask(f, a.channelId, 'barrier 0');
    await ask(f, b.channelId, 'barrier 1');

    expect(texts(zero)).toEqual(['barrier 0', 'in a DM', 'in guild a']);
    expect(texts(one)).toEqual(['barrier 1', 'in guild b', 'in guild c']);
    expect(zero.seen.find((m) => m.text === 'in a DM')?.isDm).toBe(true);
    for (const [channelId, text] of [
      [a.channelId, 'in guild a'],
      [b.channelId, 'in guild b'],
      [c.channelId, 'in guild c'],
      [dm, 'in a DM'],
    ] as const) {
      expect(answersTo(f, channelId, text), text).toBe(1);
    }
    for (const c of connectors) expect(c.readiness()).toBe(true);
  });

  it('runs the count Discord recommends in GET /gateway/bot when DISCORD_SHARD_COUNT is unset, all of it', async () => {
    // max_concurrency 2: both shards identify at once (with 1, discord.js spaces them 5 s apart).
    const f = (fake = await startFakeDiscord({ recommendedShards: 2, maxConcurrency: 2 }));
    const a = guildOnShard(f, 0, 2);
    const b = guildOnShard(f, 1, 2);
    const logs = new LogLines();
    const handler = new EchoHandler();
    const connector = await connectTo(f, handler, { replyMode: 'inline', logger: logs.logger });
    connectors.push(connector);

    expect(f.gateway.connectedShards()).toEqual([
      [0, 2],
      [1, 2],
    ]);
    expect(logs.find('discord: connected')[0]).toMatchObject({ shards: [0, 1], shardCount: 2, guilds: 2 });
    expect(logs.find('discord: shard ready').map((l) => l.shard)).toEqual(expect.arrayContaining([0, 1]));
    expect(connector.isReady()).toBe(true);
    await ask(f, a.channelId, 'shard 0 guild');
    await ask(f, b.channelId, 'shard 1 guild');
    // Sharded: slash commands go global (a replica's guild count says nothing about the bot's).
    expect(f.state.commands.has('global')).toBe(true);
    expect(f.state.commands.has(a.guildId)).toBe(false);
  });

  it('one shard when Discord recommends one (the unsharded default)', async () => {
    const f = (fake = await startFakeDiscord());
    const a = guildOnShard(f, 0, 1);
    const logs = new LogLines();
    const connector = await connectTo(f, new EchoHandler(), { replyMode: 'inline', logger: logs.logger });
    connectors.push(connector);
    expect(f.gateway.connectedShards()).toEqual([[0, 1]]);
    expect(logs.find('discord: connected')[0]).toMatchObject({ shards: [0], shardCount: 1 });
    // Few guilds, unsharded: guild-scoped commands, as before sharding existed.
    expect(f.state.commands.has(a.guildId)).toBe(true);
    expect(connector.readiness()).toBe(true);
  });

  it('is ready only while every shard of this replica is: not before the last is up, not while one reconnects', async () => {
    const f = (fake = await startFakeDiscord({ maxConcurrency: 2 }));
    const a = guildOnShard(f, 0, 2);
    const b = guildOnShard(f, 1, 2);
    const logs = new LogLines();
    const handler = new EchoHandler();

    // Start with shard 1's IDENTIFY held: shard 0 turns ready, the replica does not.
    const held = f.gateway.holdShard(1);
    const connector = unstarted(f, { count: 2, ids: [0, 1] }, logs);
    const started = connector.start(handler);
    await held.reached;
    await logs.waitFor('discord: shard ready', (l) => l.shard === 0);
    expect(connector.isReady()).toBe(false);
    const readyz = readinessFrom({ discord: () => connector.readiness() });
    expect(readyz()).toMatchObject({ ready: false, checks: { discord: 'not connected' } });
    held.release();
    await started;
    expect(connector.isReady()).toBe(true);
    expect(readyz()).toEqual({ ready: true, checks: { discord: true } });

    // Shard 1's connection is dropped and its RESUME held: not ready, and /readyz names the shard.
    const heldAgain = f.gateway.holdShard(1);
    const from = logs.mark();
    f.disconnectGateway(4000, 1);
    await logs.waitFor('discord: shard reconnecting', (l) => l.shard === 1, { from });
    await heldAgain.reached;
    expect(connector.isReady()).toBe(false);
    expect(readyz()).toEqual({ ready: false, checks: { discord: 'gateway shard 1 of 2 not connected' } });
    // Shard 0 dropping and resuming meanwhile does not make the replica ready while 1 is away.
    const resumed0 = f.gateway.waitFor('resumed');
    f.disconnectGateway(4000, 0);
    expect(await resumed0).toEqual([0, 2]);
    await logs.waitFor('discord: shard resumed', (l) => l.shard === 0, { from });
    expect(readyz()).toEqual({ ready: false, checks: { discord: 'gateway shard 1 of 2 not connected' } });
    // Shard 0 goes on answering; a message for shard 1 waits in its session.
    await ask(f, a.channelId, 'while shard 1 is away');
    f.dispatchMessage({ channelId: b.channelId, authorId: USER, content: mention(f, 'missed'), mentionsBot: true });
    expect(connector.isReady()).toBe(false);

    heldAgain.release();
    await logs.waitFor('discord: shard resumed', (l) => l.shard === 1, { from });
    expect(connector.isReady()).toBe(true);
    await f.waitUntil(() => answersTo(f, b.channelId, 'missed') === 1, 15_000, 'the replayed message answered');
    expect(f.gateway.stats.resumes).toBe(2);
    await ask(f, b.channelId, 'after');
    expect(answersTo(f, b.channelId, 'missed')).toBe(1);
  });
});
