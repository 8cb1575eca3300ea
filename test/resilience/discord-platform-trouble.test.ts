import { afterEach, expect, it } from 'vitest';
import { createDiscordConnector, type DiscordConnector } from '../../src/connectors/discord/index.js';
import { longMarkdown } from '../../src/emulator/replies.js';
import { silentLogger } from '../../src/logger.js';
import { type FakeDiscord, type FakeDiscordOptions, startFakeDiscord } from '../fakes/discord/index.js';
import { partsProblems } from '../integration/discord/parts.js';
import { type CoreHarness, startCore, waitFor } from './harness.js';

// Discord misbehaving as it does, under the real discord.js and the relay. The gateway: op 7
// Reconnect, a zombie link (heartbeats unanswered, nothing delivered), identify spacing; discord.js
// must reconnect and RESUME (not identify again), and every user message, including those
// dispatched around the reconnect, is answered exactly once. REST: a global 429 and a shared-scope
// 429 on a reply write are honoured (nothing sent while the global limit holds) and the reply
// still lands in full.

const USER = '300000000000000001';

interface World {
  fake: FakeDiscord;
  h: CoreHarness;
  connector: DiscordConnector;
  channel: string;
}

let world: World | undefined;

afterEach(async () => {
  await world?.connector.shutdown();
  await world?.h.close();
  await world?.fake.close();
  world = undefined;
});

function connect(fake: FakeDiscord, h: CoreHarness): DiscordConnector {
  return createDiscordConnector({
    config: { botToken: fake.token, apiUrl: fake.apiUrl, replyMode: 'inline', allowedGuilds: [], allowedChannels: [] },
    logger: silentLogger,
    rateLimits: h.relay.rateLimits,
    assumedBudget: { limit: 10, windowMs: 1000 },
  });
}

async function start(opts: FakeDiscordOptions = {}): Promise<World> {
  const fake = await startFakeDiscord({ rateLimit: { limit: 50, windowMs: 1000 }, ...opts });
  const channel = fake.addChannel(fake.addGuild('g'), 'general');
  const h = await startCore({ settings: { streamEditIntervalMs: 100 } });
  const connector = connect(fake, h);
  await connector.start(h.relay);
  world = { fake, h, connector, channel };
  return world;
}

/**
 * A heartbeat interval short enough for discord.js to find a zombie link within a second, long
 * enough that a loaded machine does not delay an ACK past it (150 ms did, under two busy loops).
 * Other tests keep Discord's 30 s-like default, so nothing but the trouble under test reconnects.
 */
const ZOMBIE_HEARTBEAT_MS = 400;

/** The next RESUME of shard `shard`. */
async function resumedShard(fake: FakeDiscord, shard: number): Promise<void> {
  for (;;) {
    const [id] = await fake.gateway.waitFor('resumed', 15_000);
    if (id === shard) return;
  }
}

const ask = (w: World, text: string) =>
  w.fake.dispatchMessage({
    channelId: w.channel,
    authorId: USER,
    content: `<@${w.fake.botUser.id}> ${text}`,
    mentionsBot: true,
  });

/** Waits until the relay is idle and the channel shows exactly `texts` answered, in order. */
async function expectAnsweredOnce(w: World, texts: string[]): Promise<void> {
  const expected = texts.map((t) => `You said: ${t}`);
  await w.fake.waitUntil(
    () => expected.every((e) => w.fake.botMessages(w.channel).some((m) => m.content === e)),
    20_000,
    `the replies to ${texts.join(', ')}`,
  );
  await waitFor(() => w.h.relay.stats().inFlight + w.h.relay.stats().queued === 0, 10_000, 'the relay to be idle');
  expect(w.fake.botMessages(w.channel).map((m) => m.content)).toEqual(expected);
  for (const t of texts)
    expect(
      w.h.emu.requests.filter((r) => r.message === t),
      t,
    ).toHaveLength(1);
}

it('op 7 Reconnect: discord.js resumes (no new identify); messages just before, during and after are answered once', async () => {
  const w = await start();
  const { fake } = w;
  ask(w, 'first [chunks 8] [delay 20]');
  await fake.waitUntil(() => fake.botMessages(w.channel).length > 0, 10_000, 'the first reply to start');

  const resumed = fake.gateway.waitFor('resumed');
  // One on the old connection right before op 7, one after it (discord.js has stopped reading
  // the old connection by then: only the RESUME's replay can bring it).
  ask(w, 'just before');
  fake.gateway.requestReconnect();
  ask(w, 'while reconnecting');
  await resumed;
  ask(w, 'after');

  await expectAnsweredOnce(w, ['first [chunks 8] [delay 20]', 'just before', 'while reconnecting', 'after']);
  expect(fake.gateway.stats).toMatchObject({ identifies: 1, resumes: 1, reconnectsSent: 1, invalidSessions: 0 });
  expect(w.connector.isReady()).toBe(true);
}, 40_000);

it('a zombie link (no heartbeat ACK, nothing delivered): discord.js gives up on it, resumes, and the missed message is answered once', async () => {
  const w = await start({ heartbeatIntervalMs: ZOMBIE_HEARTBEAT_MS });
  const { fake } = w;
  ask(w, 'before the zombie');
  await fake.waitUntil(() => fake.botMessages(w.channel).length > 0, 10_000, 'the first reply');

  const unanswered = fake.gateway.waitFor('heartbeat-unanswered');
  const resumed = fake.gateway.waitFor('resumed');
  fake.gateway.zombify();
  ask(w, 'into the void');
  await unanswered;
  await resumed;
  ask(w, 'after the resume');

  await expectAnsweredOnce(w, ['before the zombie', 'into the void', 'after the resume']);
  expect(fake.gateway.stats.unansweredHeartbeats).toBeGreaterThan(0);
  expect(fake.gateway.stats).toMatchObject({ identifies: 1, resumes: 1, invalidSessions: 0 });
  expect(w.connector.isReady()).toBe(true);
}, 40_000);

it('two shards, one goes zombie: the other keeps answering, the zombie one resumes and its missed message is answered once', async () => {
  const w = await start({ recommendedShards: 2, maxConcurrency: 2, heartbeatIntervalMs: ZOMBIE_HEARTBEAT_MS });
  const { fake } = w;
  const healthy = fake.addChannel(fake.addGuild('on shard 0', { shard: 0, count: 2 }), 'general');
  const zombie = fake.addChannel(fake.addGuild('on shard 1', { shard: 1, count: 2 }), 'general');
  const sayIn = (channelId: string, text: string) =>
    fake.dispatchMessage({ channelId, authorId: USER, content: `<@${fake.botUser.id}> ${text}`, mentionsBot: true });
  const answered = (channelId: string, text: string) => () =>
    fake.botMessages(channelId).some((m) => m.content === `You said: ${text}`);
  // both guilds known to the bot before the trouble starts
  sayIn(healthy, 'hello 0');
  sayIn(zombie, 'hello 1');
  await fake.waitUntil(() => answered(healthy, 'hello 0')() && answered(zombie, 'hello 1')(), 10_000, 'both shards');

  const resumed = resumedShard(fake, 1);
  fake.gateway.zombify(1);
  sayIn(zombie, 'lost in the zombie shard');
  sayIn(healthy, 'on the healthy shard');
  await fake.waitUntil(answered(healthy, 'on the healthy shard'), 10_000, 'the healthy shard to answer');
  await resumed;
  await fake.waitUntil(answered(zombie, 'lost in the zombie shard'), 10_000, 'the replayed message to be answered');
  await waitFor(() => w.h.relay.stats().inFlight + w.h.relay.stats().queued === 0, 10_000, 'the relay to be idle');
  expect(fake.botMessages(zombie).map((m) => m.content)).toEqual([
    'You said: hello 1',
    'You said: lost in the zombie shard',
  ]);
  expect(fake.botMessages(healthy).map((m) => m.content)).toEqual([
    'You said: hello 0',
    'You said: on the healthy shard',
  ]);
  expect(fake.gateway.stats).toMatchObject({ identifies: 2, resumes: 1, invalidSessions: 0 });
  expect(w.connector.readiness()).toBe(true);
}, 40_000);

it('identify spacing: two shards with max_concurrency 1 both come up, a window apart, and answer', async () => {
  const w = await start({ identifyWindowMs: 5000, recommendedShards: 2, maxConcurrency: 1 });
  expect(w.fake.gateway.connectedShards()).toEqual([
    [0, 2],
    [1, 2],
  ]);
  expect(w.fake.gateway.stats.identifies).toBe(2);
  // discord.js waits 5 s (plus up to 1.5 s of jitter) between the shards, timed before it sends;
  // on a loaded machine the second IDENTIFY can still land a hair inside the window as the
  // gateway times it (seen under two busy loops): that one gets op 9 and the retry, a throttle
  // later, goes through. Never more than that one.
  expect(w.fake.gateway.stats.identifiesRefused).toBeLessThanOrEqual(1);
  ask(w, 'sharded');
  await expectAnsweredOnce(w, ['sharded']);
}, 40_000);

it('identify spacing: a restarted bridge identifying too soon gets op 9, waits its turn, identifies and answers', async () => {
  const w = await start({ identifyWindowMs: 5000 });
  const { fake } = w;
  await w.connector.shutdown();
  const refused = fake.gateway.waitFor('identify-refused');
  // The restart: a new client, whose throttle knows nothing of the identify a moment ago.
  const restarted = connect(fake, w.h);
  w.connector = restarted;
  const started = restarted.start(w.h.relay);
  const [, sinceLast] = await refused;
  // Not a speed bound: the fake measured this gap and refused because it is inside its 5 s window.
  expect(sinceLast as number).toBeLessThan(5000);
  await started;
  expect(fake.gateway.stats).toMatchObject({ identifies: 2, identifiesRefused: 1 });
  ask(w, 'after the restart');
  await expectAnsweredOnce(w, ['after the restart']);
}, 40_000);

const MESSAGE_EDIT = /^\/channels\/\d+\/messages\/\d+$/;

it('a global 429 on a reply edit: no request while it holds, then the reply lands in full', async () => {
  const w = await start();
  const { fake } = w;
  fake.limits.armGlobal('PATCH', MESSAGE_EDIT, 400);
  const text = 'under a global limit [chunks 12] [delay 30]';
  ask(w, text);
  await expectAnsweredOnce(w, [text]);

  const refused = fake.limits.refused;
  expect(refused).toHaveLength(1);
  expect(refused[0]).toMatchObject({ scope: 'global', method: 'PATCH' });
  // discord.js held every request (this reply's edits, typing, anything) until the limit ended
  expect(fake.limits.duringGlobal).toEqual([]);
  const at = refused[0]?.at ?? 0;
  const editsAfter = fake.record.filter((r) => r.method === 'PATCH' && r.status === 200 && r.at >= at + 400);
  expect(editsAfter.length).toBeGreaterThan(0);
}, 40_000);

it('a shared-scope 429 on a reply edit: the channel waits it out and the reply lands in full', async () => {
  const w = await start();
  const { fake } = w;
  fake.limits.armShared('PATCH', MESSAGE_EDIT, 300);
  const text = 'under a shared limit [chunks 12] [delay 30]';
  ask(w, text);
  await expectAnsweredOnce(w, [text]);

  const refused = fake.limits.refused;
  expect(refused).toHaveLength(1);
  expect(refused[0]).toMatchObject({ scope: 'shared', method: 'PATCH' });
  const at = refused[0]?.at ?? 0;
  // the next write to the channel's messages came once the shared limit had passed
  const next = fake.record.find((r) => r.path.includes('/messages') && r.status !== 429 && r.at > at);
  expect(next).toBeDefined();
  expect((next?.at ?? 0) - at).toBeGreaterThanOrEqual(300);
}, 40_000);

it('a long reply whose next part meets a global 429 and whose edit meets a shared one: every part once, exact', async () => {
  const w = await start();
  const { fake } = w;
  const n = 4500;
  ask(w, `long [long ${n}] [chunks 40] [delay 10]`);
  await fake.waitUntil(() => fake.botMessages(w.channel).length > 0, 10_000, 'the first part');
  fake.limits.armGlobal('POST', /^\/channels\/\d+\/messages$/, 400);
  fake.limits.armShared('PATCH', MESSAGE_EDIT, 300);
  const exact = () =>
    partsProblems(
      fake.botMessages(w.channel).map((m) => m.content),
      longMarkdown(n),
    ).length === 0;
  await fake.waitUntil(exact, 20_000, 'the reply in full');
  await waitFor(() => w.h.relay.stats().inFlight + w.h.relay.stats().queued === 0, 10_000, 'the relay to be idle');
  expect(
    partsProblems(
      fake.botMessages(w.channel).map((m) => m.content),
      longMarkdown(n),
    ),
  ).toEqual([]);
  expect(fake.limits.refused.map((r) => `${r.scope} ${r.method}`).sort()).toEqual(['global POST', 'shared PATCH']);
  expect(fake.limits.duringGlobal).toEqual([]);
  expect(w.h.upstreamCalls()).toBe(1);
}, 40_000);
