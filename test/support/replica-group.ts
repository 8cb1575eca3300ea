import { startEmulator } from '../../src/emulator/index.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { assertNoPings } from '../fakes/discord/writes.js';
import { startFakeSlack } from '../fakes/slack/index.js';
import { assertNoSlackPings } from '../fakes/slack/mention-check.js';
import { type BridgeChild, ensureBuilt, killHard, spawnBridge } from '../resilience/bridge-child.js';
import { waitFor } from '../resilience/harness.js';
import { createTestDatabase } from './pg.js';

// Several real `assistant-bridge start` processes on one PostgreSQL database of their own, with
// one emulator, one fake Slack (HTTP mode: the test chooses the replica each event goes to) and one
// fake Discord. Call closeGroups() after each test.

export type Emulator = Awaited<ReturnType<typeof startEmulator>>;
export type FakeSlack = Awaited<ReturnType<typeof startFakeSlack>>;

const cleanups: Array<() => Promise<void>> = [];

/** Checks run once the groups are down (they throw; cleanups may not). */
const checks: Array<() => void> = [];

export async function closeGroups(): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  for (const check of checks.splice(0)) check();
}

export interface Group {
  emu: Emulator;
  slack: FakeSlack;
  discord: FakeDiscord;
  replicas: BridgeChild[];
  /** The text channels made for `discordGuilds`, in order. */
  guildChannels: string[];
  eventsUrl(i: number): string;
  start(id: string, extra?: Record<string, string>): Promise<BridgeChild>;
  /** The group's own database (its URL names it), for tests that take it down. */
  database: { url: string };
}

export interface GroupOptions {
  env?: Record<string, string>;
  /** Per replica (by index): extra variables, e.g. the Discord shards it runs. */
  perReplica?: (discord: FakeDiscord) => Array<Record<string, string>>;
  /** Discord guilds to create before the replicas start: [shard, count] of each. */
  discordGuilds?: Array<[number, number]>;
}

export async function group(count: number, o: GroupOptions = {}): Promise<Group> {
  ensureBuilt();
  const db = await createTestDatabase();
  const emu = await startEmulator({ port: 0, chunkDelayMs: 2 });
  const slack = await startFakeSlack();
  const discord = await startFakeDiscord({ recommendedShards: 2 });
  const guildChannels = (o.discordGuilds ?? []).map(([shard, of], i) =>
    discord.addChannel(discord.addGuild(`guild ${i}`, { shard, count: of }), 'general'),
  );
  const replicas: BridgeChild[] = [];
  cleanups.push(async () => {
    await Promise.all(replicas.map((r) => killHard(r)));
    await Promise.allSettled([emu.close(), slack.close(), discord.close()]);
    await db.drop();
  });
  // The shared check over every write the replicas made on the fake Discord.
  checks.push(() => assertNoPings(discord.record));
  checks.push(() => assertNoSlackPings(slack.calls));
  const start = async (id: string, extra: Record<string, string> = {}) => {
    const r = await spawnBridge({
      CHAT_API_URL: emu.url,
      CHAT_API_KEY: 'dev-key',
      CHAT_BOT_ID: 'demo-bot',
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: slack.signingSecret,
      SLACK_API_URL: slack.apiUrl,
      SLACK_STREAMING: 'edit',
      STREAM_EDIT_INTERVAL_MS: '200',
      DATABASE_URL: db.url,
      REPLICA_ID: id,
      ...o.env,
      ...extra,
    });
    replicas.push(r);
    return r;
  };
  const extra = o.perReplica?.(discord) ?? [];
  for (let i = 0; i < count; i++) await start(`replica-${i + 1}`, extra[i] ?? {});
  await Promise.all(replicas.map((r) => r.waitReady(30_000)));
  return {
    emu,
    slack,
    discord,
    replicas,
    guildChannels,
    eventsUrl: (i) => `${replicas[i]!.base}/slack/events`,
    start,
    database: { url: db.url },
  };
}

/** The bot's replies in a Slack channel or DM, in order, as their current texts. */
// A DM's replies are in the threads under its messages (Slack's agent experience), wherever they are.
export const repliesIn = (slack: FakeSlack, channel: string) => slack.agent.replies(channel).map((m) => m.text);

/** Waits for `ok` (polled: the replicas are other processes); `explain` says what was seen instead. */
export async function until(what: string, ok: () => boolean, timeoutMs: number, explain: () => string): Promise<void> {
  await waitFor(ok, timeoutMs, () => `${what}: ${explain()}`, 50);
}
