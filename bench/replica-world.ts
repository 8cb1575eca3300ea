import { renderMrkdwn } from '../src/connectors/slack/render.js';
import { startEmulator } from '../src/emulator/index.js';
import { resolve } from 'node:path';
import { createPgStore, loadPgMigrations } from '../src/store/pg/index.js';
import { type FakeSlack, type RateModelName, startFakeSlack, workspaceBotToken } from '../test/fakes/slack/index.js';
import { startTimingProxy, type TimingProxy } from '../test/fakes/timing-proxy.js';
import { createTestDatabase } from '../test/support/pg.js';
import { BENCH_API_KEY, type BridgeProcess, metricSum, startBridge, upstreamEnv } from './bridge-process.js';

// One run of the replica bench: 1..N real bridge processes (`node dist/cli.js start`) on one
// store (a SQLite file of their own, or a fresh PostgreSQL database dropped afterwards), the fake
// Slack in HTTP mode with its rate limits on, and the emulator behind the timing proxy. A user
// writes in a DM place; the bench posts the signed event to the replica it picks (round-robin,
// no sticky balancing), as a load balancer would. What each reply cost is read off the fake's
// write log and the proxy's timings.

export type Backend = 'sqlite' | 'postgres';

export interface WorldOptions {
  backend: Backend;
  replicas: number;
  rateModel: RateModelName;
  /**
   * PostgreSQL only: the app is installed in this many workspaces (T0BENCH00…, OAuth, the
   * installations written to the database before any message), each with its own buckets at the
   * fake. 0: one workspace, a single bot token.
   */
  workspaces?: number;
}

/** One user message and what became of it (epoch ms; undefined where it did not happen). */
export interface ReplyTiming {
  tag: string;
  place: string;
  /** Which replica the event was posted to. */
  replica: number;
  sentAt: number;
  /** The bridge's upstream request reached the proxy. */
  requestAt?: number;
  firstChunkAt?: number;
  endAt?: number;
  /** The reply message's first and last accepted write at the fake. */
  firstWriteAt?: number;
  lastWriteAt?: number;
  /** Accepted writes of the reply message (1: posted once, whole). */
  writes: number;
}

export interface ReplicaWorld {
  /** A user's message in a DM place, its event posted to replica `replica`; resolves once acked. */
  send(place: string, tag: string, text: string, replica: number): Promise<void>;
  /** The workspaces the app is installed in (one when not multi-workspace). */
  teams: string[];
  /** Every place shows each of its replies once, with its final text (in any order). */
  allAnswered(): boolean;
  /** Places not showing each of their replies once, final (yet). */
  unanswered(): string[];
  /** Places whose replies are shown in an order other than their messages'. */
  outOfOrder(): string[];
  /** What a place shows against what it should: e.g. `2 of 3 replies, 1 differs`. */
  describe(place: string): string;
  timings(): ReplyTiming[];
  /** 429s the fake answered (all replicas together), and what the bridges counted. */
  rateLimited(): Promise<{ fake: number; bridges: number }>;
  /** Sum of a counter over every replica's /metrics. */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  cpuSeconds(): number;
  logTail(): string[];
  close(): Promise<void>;
}

const API_KEY = BENCH_API_KEY;
/** The proxy keys a reply by the last `bench-<tag>` of the request: earlier ones may be context. */
const LAST_TAG = /bench-([A-Za-z0-9_-]+)(?![\s\S]*bench-[A-Za-z0-9_-])/;

export async function startReplicaWorld(o: WorldOptions): Promise<ReplicaWorld> {
  const closers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  };
  try {
    const db = o.backend === 'postgres' ? await createTestDatabase() : undefined;
    if (db) closers.push(() => db.drop());
    const emulator = await startEmulator({ port: 0, apiKey: API_KEY, bots: ['demo-bot'], maxRecordedRequests: 100 });
    closers.push(() => emulator.close());
    const proxy: TimingProxy = await startTimingProxy(emulator.url, { tagPattern: LAST_TAG });
    closers.push(() => proxy.close());
    const teams = Array.from({ length: o.workspaces ?? 0 }, (_, i) => `T0BENCH${String(i).padStart(2, '0')}`);
    if (teams.length > 0 && db === undefined) throw new Error('several workspaces need PostgreSQL here');
    const slack: FakeSlack = await startFakeSlack({ rateModel: o.rateModel, workspaces: teams });
    closers.push(() => slack.close());
    if (db !== undefined && teams.length > 0) await install(db.url, teams);
    const bridges: BridgeProcess[] = [];
    // Stopped before the database is dropped (closers run in reverse).
    closers.push(() => Promise.all(bridges.map((b) => b.stop())));
    const env = (i: number): Record<string, string> => ({
      ...upstreamEnv(proxy.url),
      ...(teams.length > 0
        ? { SLACK_CLIENT_ID: 'bench-client', SLACK_CLIENT_SECRET: 'bench-secret', SLACK_STATE_SECRET: 'bench-state' }
        : { SLACK_BOT_TOKEN: slack.botToken }),
      SLACK_SIGNING_SECRET: slack.signingSecret,
      SLACK_API_URL: slack.apiUrl,
      SLACK_STREAMING: 'edit',
      ...(db ? { DATABASE_URL: db.url, REPLICA_ID: `bench-replica-${i + 1}` } : {}),
    });
    // One after another: the first migrates, the rest find the schema current.
    for (let i = 0; i < o.replicas; i++) bridges.push(await startBridge(env(i), { readyTimeoutMs: 30_000 }));
    return world(slack, proxy, bridges, teams.length > 0 ? teams : [slack.teamId], close);
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The app's installation in each workspace, as Bolt's installation store keeps it, written before
 * the replicas start (they migrate a database that is already current).
 */
async function install(url: string, teams: string[]): Promise<void> {
  // The migrations the bridge (dist/) will find, from the repository the bench runs in.
  const migrations = loadPgMigrations(resolve('migrations', 'postgres'));
  const store = await createPgStore(url, { checkIntervalMs: 0, poolMax: 1, migrations });
  try {
    for (const id of teams) {
      const installation = {
        team: { id, name: id },
        user: { id: 'U0INSTALLER' },
        tokenType: 'bot',
        isEnterpriseInstall: false,
        appId: 'A0FAKE',
        bot: { token: workspaceBotToken(id), userId: 'U0BOT', id: 'B0BOT', scopes: ['chat:write'] },
      };
      await store.installations.save(
        { teamId: id, enterpriseId: undefined },
        'U0INSTALLER',
        JSON.stringify(installation),
        Date.now(),
      );
    }
  } finally {
    await store.close();
  }
}

function world(
  slack: FakeSlack,
  proxy: TimingProxy,
  bridges: BridgeProcess[],
  teams: string[],
  close: () => Promise<void>,
): ReplicaWorld {
  const sent: ReplyTiming[] = [];
  /** Per place, the replies it must show, in order (as the fake shows them: rendered mrkdwn). */
  const expected = new Map<string, string[]>();
  // DMs are answered in a thread under each message (Slack's agent experience): read them all.
  const shown = (place: string) => slack.agent.replies(place);
  const got = (place: string) => shown(place).map((m) => m.text);
  const sorted = (xs: string[]) => [...xs].sort().join('\n');
  const answeredIn = (place: string) => sorted(got(place)) === sorted(expected.get(place) ?? []);
  const inOrder = (place: string) => got(place).join('\n') === (expected.get(place) ?? []).join('\n');

  /** A place's workspace: places are dealt out over the workspaces in turn. */
  const teamOf = (place: string) => teams[Number(place.replace(/\D/g, '')) % teams.length] ?? slack.teamId;
  return {
    teams,
    async send(place, tag, text, replica) {
      const words = `bench-${tag} ${text}`;
      expected.set(place, [...(expected.get(place) ?? []), renderMrkdwn(`You said: ${words}`)]);
      const user = `U0${place.slice(1).padStart(8, '0')}`;
      const teamId = teamOf(place);
      const post = slack.userPost({ channel: place, channelType: 'im', user, text: words, teamId });
      const target = bridges[replica % bridges.length];
      if (target === undefined) throw new Error('no replica to send to');
      const sentAt = Date.now();
      sent.push({ tag, place, replica: replica % bridges.length, sentAt, writes: 0 });
      const res = await slack.postSignedEvent(
        `http://127.0.0.1:${target.port}/slack/events`,
        slack.envelope(post.message, teamId),
      );
      if (res.status !== 200) throw new Error(`replica ${replica} answered the event with ${res.status}`);
    },
    allAnswered: () => [...expected.keys()].every(answeredIn),
    unanswered: () => [...expected.keys()].filter((p) => !answeredIn(p)),
    outOfOrder: () => [...expected.keys()].filter((p) => answeredIn(p) && !inOrder(p)),
    describe(place) {
      const want = expected.get(place) ?? [];
      const have = got(place);
      const tag = (t: string | undefined) => /bench-([A-Za-z0-9_-]+)/.exec(t ?? '')?.[1] ?? '?';
      return `${place}: ${have.length} of ${want.length} replies shown (${have.map(tag).join(', ')}; sent ${want.map(tag).join(', ')})`;
    },
    timings() {
      // A reply message is found by its tag; its writes by its ts in the fake's write log.
      const writes = new Map<string, number[]>();
      for (const w of slack.writeLog) {
        if (!w.accepted || w.ts === undefined) continue;
        const list = writes.get(w.ts) ?? [];
        list.push(w.at);
        writes.set(w.ts, list);
      }
      const messageOf = new Map<string, string>();
      for (const place of expected.keys()) {
        for (const m of shown(place)) {
          const tag = /bench-([A-Za-z0-9_-]+)/.exec(m.text)?.[1];
          if (tag !== undefined && !messageOf.has(tag)) messageOf.set(tag, m.ts);
        }
      }
      return sent.map((s) => {
        const up = proxy.timings.get(s.tag);
        const ts = messageOf.get(s.tag);
        const ws = ts === undefined ? [] : (writes.get(ts) ?? []);
        return {
          ...s,
          writes: ws.length,
          ...(up !== undefined ? { requestAt: up.requestAt } : {}),
          ...(up?.firstChunkAt !== undefined ? { firstChunkAt: up.firstChunkAt } : {}),
          ...(up?.endAt !== undefined ? { endAt: up.endAt } : {}),
          ...(ws.length > 0 ? { firstWriteAt: ws[0], lastWriteAt: ws[ws.length - 1] } : {}),
        };
      });
    },
    async rateLimited() {
      return {
        fake: slack.rateLimitHits,
        bridges: await sumMetric(bridges, 'bridge_platform_rate_limited_total'),
      };
    },
    metric: (name, labels) => sumMetric(bridges, name, labels),
    cpuSeconds: () => bridges.reduce((s, b) => s + b.cpuSeconds(), 0),
    logTail: () => bridges.flatMap((b, i) => b.logTail.slice(-3).map((l) => `[${i + 1}] ${l}`)),
    close,
  };
}

async function sumMetric(bridges: BridgeProcess[], name: string, labels: Record<string, string> = {}): Promise<number> {
  const texts = await Promise.all(bridges.map((b) => b.metrics().catch(() => '')));
  return texts.reduce((s, t) => s + metricSum(t, name, labels), 0);
}
