import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/index.js';
import { startFakeSlack } from '../fakes/slack/index.js';
import { type BridgeChild, ensureBuilt, killHard, spawnBridge } from '../resilience/bridge-child.js';
import { createTestDatabase, pgSkipReason } from '../support/pg.js';

// Several real `assistant-bridge start` processes in Slack Socket Mode, sharing one PostgreSQL.
// Each replica opens its own Socket Mode connection of the one app; Slack sends each event to ONE
// of the app's open connections (the fake: round-robin) and a retry, when the ack came late, may
// reach another. What a user sees must be what one bridge would show: every message answered
// once, in order per place, in its place's conversation. A replica told to stop (a rolling
// deploy) closes its connection at once, so Slack sends the next events to the others, while
// the reply it is writing still finishes.

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
type FakeSlack = Awaited<ReturnType<typeof startFakeSlack>>;

const skip = await pgSkipReason();
if (skip) console.log(`replica Socket Mode tests skipped: ${skip}`);

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

interface Group {
  emu: Emulator;
  slack: FakeSlack;
  replicas: BridgeChild[];
  /** The fake's number of each replica's Socket Mode connection, by replica index. */
  connectionOf: number[];
  /** The replicas' shared database. */
  dbUrl: string;
}

async function group(count: number): Promise<Group> {
  ensureBuilt();
  const db = await createTestDatabase();
  const emu = await startEmulator({ port: 0, chunkDelayMs: 2 });
  const slack = await startFakeSlack();
  const replicas: BridgeChild[] = [];
  cleanups.push(async () => {
    await Promise.all(replicas.map((r) => killHard(r)));
    await Promise.allSettled([emu.close(), slack.close()]);
    await db.drop();
  });
  const connectionOf: number[] = [];
  for (let i = 0; i < count; i++) {
    const r = await spawnBridge({
      CHAT_API_URL: emu.url,
      CHAT_API_KEY: 'dev-key',
      CHAT_BOT_ID: 'demo-bot',
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_APP_TOKEN: slack.appToken,
      SLACK_API_URL: slack.apiUrl,
      SLACK_STREAMING: 'edit',
      STREAM_EDIT_INTERVAL_MS: '200',
      DATABASE_URL: db.url,
      REPLICA_ID: `replica-${i + 1}`,
    });
    replicas.push(r);
    // One at a time: ready means its connection is open, so the newest connection is its own.
    await r.waitReady(30_000);
    await slack.waitSocketConnections(i + 1);
    connectionOf.push(Math.max(...slack.socketConnectionIds));
  }
  return { emu, slack, replicas, connectionOf, dbUrl: db.url };
}

/** The bot's replies in a DM, in order, as their final texts. */
const repliesIn = (slack: FakeSlack, channel: string) => slack.agent.replies(channel).map((m) => m.text);

async function until(what: string, ok: () => boolean, timeoutMs: number, explain: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`${what} not reached in ${timeoutMs} ms: ${explain()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Sends user messages over Socket Mode; every third is sent again as Slack's retry, elsewhere. */
function sender(slack: FakeSlack) {
  const sent = new Map<string, string[]>();
  let n = 0;
  return {
    sent,
    async send(channel: string, text: string): Promise<void> {
      sent.set(channel, [...(sent.get(channel) ?? []), text]);
      const body = slack.envelope(slack.userPost({ channel, channelType: 'im', text }).message);
      const first = await slack.deliverEvent(body);
      if (++n % 3 === 0) {
        const again = await slack.deliverEvent(body, { retryNum: 1, retryReason: 'timeout', avoid: first.connection });
        expect(again.connection).not.toBe(first.connection);
      }
    },
    want: (channel: string) => (sent.get(channel) ?? []).map((t) => `You said: ${t}`),
  };
}

/** Each place's messages went upstream once each, in order, in one conversation of its own. */
function expectOneConversationEach(emu: Emulator, sent: Map<string, string[]>): void {
  const last: Array<string | undefined> = [];
  for (const [channel, texts] of sent) {
    const asked = emu.requests.filter((r) => (r.message ?? '').startsWith(`${channel} `));
    expect(asked.map((r) => r.message)).toEqual(texts);
    // The first turn opens the conversation (Form A: the upstream names it in its reply).
    const ids = new Set(asked.slice(1).map((r) => r.conversationId));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toBeDefined();
    last.push(asked.at(-1)?.conversationId);
  }
  expect(new Set(last).size).toBe(sent.size);
}

describe.skipIf(skip !== undefined)('several replicas in Slack Socket Mode on one PostgreSQL', () => {
  it('3 replicas, 3 connections, events round-robin, every third retried on another connection: 40 DMs in 8 places answered once, in order', async () => {
    const g = await group(3);
    expect(g.slack.socketConnectionIds).toEqual(g.connectionOf);
    const places = Array.from({ length: 8 }, (_, i) => `D${i + 1}`);
    const s = sender(g.slack);
    for (let round = 1; round <= 5; round++) {
      for (const channel of places) await s.send(channel, `${channel} m${round}`);
    }
    await until(
      'every reply final',
      () => places.every((c) => JSON.stringify(repliesIn(g.slack, c)) === JSON.stringify(s.want(c))),
      60_000,
      () => JSON.stringify(places.map((c) => [c, repliesIn(g.slack, c)])),
    );
    // Exactly once and in order (no second answer, no notice), one conversation per place.
    for (const channel of places) expect(repliesIn(g.slack, channel)).toEqual(s.want(channel));
    expectOneConversationEach(g.emu, s.sent);
    expect(g.slack.rateLimitHitsByBucket).toEqual({});

    // Slack's side: every connection had its share, each retry went to another connection.
    const deliveries = g.slack.socketDeliveries;
    expect(deliveries.every((d) => d.acked)).toBe(true);
    for (const c of g.connectionOf) expect(deliveries.filter((d) => d.connection === c).length).toBeGreaterThan(10);
    const retries = deliveries.filter((d) => d.retryAttempt > 0);
    expect(retries).toHaveLength(Math.floor(40 / 3));
    for (const r of retries) {
      const first = deliveries.find((d) => d.eventId === r.eventId && d.retryAttempt === 0);
      expect(first?.connection).toBeDefined();
      expect(r.connection).not.toBe(first?.connection);
    }
  }, 120_000);

  it('SIGTERM of one replica: its connection closes at once, the others get every event and answer it; its reply finishes', async () => {
    const g = await group(3);
    const [leaving, ...staying] = g.connectionOf as [number, number, number];
    const places = Array.from({ length: 6 }, (_, i) => `D${20 + i}`);
    const s = sender(g.slack);
    // A reply that streams for ~5 s on the replica about to stop, and one message in every other
    // place spread over the three connections.
    const long = `${places[0]} m1 [chunks 50] [delay 100]`;
    s.sent.set(places[0]!, [long]);
    await g.slack.deliverEvent(
      g.slack.envelope(g.slack.userPost({ channel: places[0]!, channelType: 'im', text: long }).message),
      { connection: leaving },
    );
    // Its upstream stream has begun (its text may show only at the end: a replica whose share of
    // the workspace's edit budget cannot pay for every live reply's final edit posts it whole).
    await until(
      'the long reply to stream',
      () => g.emu.requests.some((r) => r.message === long),
      20_000,
      () => g.replicas[0]!.tail(),
    );
    for (const channel of places.slice(1)) await s.send(channel, `${channel} m1 [chunks 5] [delay 40]`);

    // A rolling deploy: replica 1 is told to stop while its reply streams.
    const signalled = Date.now();
    g.replicas[0]!.kill('SIGTERM');
    await g.slack.waitSocketClosed(leaving, 5_000);
    console.info(`SIGTERM → Socket Mode connection closed in ${Date.now() - signalled} ms`);
    const closedAt = g.slack.socketDeliveries.length;
    // Closed well before its drain ended: the reply it was writing is still going.
    expect(g.replicas[0]!.exitCode).toBeUndefined();
    expect(repliesIn(g.slack, places[0]!)[0]).not.toBe(`You said: ${long}`);
    expect(g.slack.socketConnectionIds).toEqual(staying);

    // Meanwhile every place, the stopping replica's included, goes on over the other connections.
    for (let round = 2; round <= 3; round++) {
      for (const channel of places) await s.send(channel, `${channel} m${round}`);
    }
    await g.replicas[0]!.exited;
    expect(g.replicas[0]!.exitSignal, g.replicas[0]!.tail()).toBeNull();
    expect(g.replicas[0]!.exitCode, g.replicas[0]!.tail(5000)).toBe(0);
    await until(
      'every reply final',
      () => places.every((c) => JSON.stringify(repliesIn(g.slack, c)) === JSON.stringify(s.want(c))),
      60_000,
      () => JSON.stringify(places.map((c) => [c, repliesIn(g.slack, c)])),
    );
    // Nothing lost (the long reply whole, not interrupted), nothing doubled, nothing refused.
    for (const channel of places) expect(repliesIn(g.slack, channel)).toEqual(s.want(channel));
    expectOneConversationEach(g.emu, s.sent);
    const after = g.slack.socketDeliveries.slice(closedAt);
    expect(after.length).toBeGreaterThanOrEqual(12);
    expect(after.every((d) => d.acked && staying.includes(d.connection))).toBe(true);
    expect(g.slack.rateLimitHitsByBucket).toEqual({});
  }, 120_000);

  // Bolt acks an event before its listeners run; the bridge holds the ack until the message is in
  // its place's queue (connectors/slack/app.ts), so the next event, at another replica, cannot overtake it.
  it('a message held up on arrival (a slow users.info) keeps its place: a later one at another replica waits for it', async () => {
    const g = await group(2);
    const [first, second] = g.connectionOf as [number, number];
    const dm = (channel: string, text: string, connection: number) =>
      g.slack.deliverEvent(g.slack.envelope(g.slack.userPost({ channel, channelType: 'im', text }).message), {
        connection,
      });
    // Replica 2 knows the user's name already; replica 1 will have to ask Slack for it.
    await dm('D40', 'D40 warm', second);
    await until(
      'the warm-up reply',
      () => repliesIn(g.slack, 'D40').length === 1,
      20_000,
      () => '',
    );
    let release = () => {};
    g.slack.switches.holdMethods.set('users.info', new Promise<void>((r) => (release = r)));

    await dm('D41', 'D41 m1', first); // replica 1 is held in users.info
    await dm('D41', 'D41 m2', second); // replica 2 could answer at once
    const db = new pg.Client({ connectionString: g.dbUrl });
    await db.connect();
    cleanups.push(() => db.end());
    let waiting = 0;
    await until(
      'both messages in the place queue, or the second answered',
      () => {
        void db
          .query<{ n: number }>('SELECT count(*)::int AS n FROM place_waiters')
          .then((r) => (waiting = r.rows[0]?.n ?? 0));
        return waiting === 2 || g.emu.requests.some((r) => r.message?.includes('D41 m2'));
      },
      10_000,
      () => `${waiting} waiting`,
    );
    expect(g.emu.requests.filter((r) => r.message?.includes('D41'))).toEqual([]);
    release();
    const want = ['You said: D41 m1', 'You said: D41 m2'];
    await until(
      'both replies, in order',
      () => JSON.stringify(repliesIn(g.slack, 'D41')) === JSON.stringify(want),
      20_000,
      () => JSON.stringify(repliesIn(g.slack, 'D41')),
    );
    expect(g.emu.requests.filter((r) => r.message?.startsWith('D41')).map((r) => r.message)).toEqual([
      'D41 m1',
      'D41 m2',
    ]);
  }, 60_000);
});
