import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startEmulator } from '../src/emulator/index.js';
import { replyText } from '../src/emulator/replies.js';
import { renderMrkdwn } from '../src/connectors/slack/render.js';
import { startFakeDiscord } from '../test/fakes/discord/index.js';
import { startFakeSlack } from '../test/fakes/slack/index.js';
import { BENCH_API_KEY, type BridgeProcess, startBridge, upstreamEnv } from './bridge-process.js';
import { type SoakStore, soakDb } from './soak-store.js';
import { round } from './text.js';

// Months, not minutes (issue 31): one bridge process answers N mentions, each in a place it has
// never seen (a new Slack channel, or a new Discord thread opened from a message), from 300 users,
// a short reply each. Every `every` places the bench forces a full GC in the bridge through the
// inspector (the bridge runs with --inspect on a loopback port; nothing in src knows) and reads
// the retained heap (Runtime.getHeapUsage after HeapProfiler.collectGarbage), the RSS and, on
// SQLite, the database file's size with its WAL. After warm-up the retained heap should grow at
// most 0.1 MB per 1,000 places and RSS stay under 150 MB.

export interface SoakSample {
  places: number;
  heapMb: number | null;
  rssMb: number | null;
  dbMb: number | null;
  seconds: number | null;
}

export interface SoakRun {
  platform: 'slack' | 'discord';
  store: SoakStore;
  places: number;
  exact: number;
  samples: SoakSample[];
  warmupPlaces: number;
  /** Retained heap growth after warm-up, MB per 1,000 places (least squares over the samples). */
  heapGrowthMbPer1000: number | null;
  peakRssMb: number | null;
  /** Database growth per 10,000 places (least squares over the samples after the first). */
  dbMbPer10000: number | null;
  repliesPerSecond: number | null;
  notes: string[];
}

export interface SoakOptions {
  places: number;
  every: number;
  warmupPlaces: number;
  platforms: ('slack' | 'discord')[];
  stores: SoakStore[];
  /** A folder for a heap snapshot at each sample (for diffing; large files). */
  snapshotDir?: string;
  /** The result so far, after each sample. */
  onProgress?: (r: SoakResult) => void;
}

export interface SoakResult {
  places: number;
  every: number;
  users: number;
  runs: SoakRun[];
}

export const SOAK_DEFAULTS = { places: 50_000, every: 5_000, users: 300, batch: 64, warmupPlaces: 10_000 };

const DIRECTIVES = '[long 300] [chunks 1] [delay 0]';
/** When Slack sends an unacknowledged event again: the first delivery, then its three retries. */
const SLACK_RETRY_AFTER_MS = [0, 0, 60_000, 300_000];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A Chrome DevTools Protocol session over the bridge's inspector WebSocket. */
async function inspector(bridge: BridgeProcess): Promise<{
  call: (method: string) => Promise<Record<string, unknown>>;
  /** A heap snapshot written to `path` (for diffing two of them; see bench/README.md). */
  snapshot: (path: string) => Promise<void>;
  close: () => void;
}> {
  let url: string | undefined;
  for (let i = 0; i < 100 && url === undefined; i++) {
    url = bridge.logTail.map((l) => /Debugger listening on (ws:\/\/\S+)/.exec(l)?.[1]).find(Boolean);
    if (url === undefined) await sleep(50);
  }
  if (url === undefined) throw new Error('the bridge printed no inspector address');
  const ws = new WebSocket(url);
  await new Promise<void>((res, rej) => {
    ws.once('open', () => res());
    ws.once('error', rej);
  });
  let next = 1;
  const waiting = new Map<number, (r: Record<string, unknown>) => void>();
  let chunks: string[] | undefined;
  ws.on('message', (data: Buffer) => {
    const msg = JSON.parse(data.toString('utf8')) as {
      id?: number;
      method?: string;
      params?: { chunk?: string };
      result?: Record<string, unknown>;
    };
    if (msg.method === 'HeapProfiler.addHeapSnapshotChunk') chunks?.push(msg.params?.chunk ?? '');
    if (msg.id !== undefined) waiting.get(msg.id)?.(msg.result ?? {});
  });
  const call = (method: string): Promise<Record<string, unknown>> => {
    const id = next++;
    return new Promise((res, rej) => {
      // A snapshot of a busy process on a shared machine can take minutes.
      const t = setTimeout(() => rej(new Error(`${method}: no answer in 10 min`)), 600_000);
      waiting.set(id, (r) => {
        clearTimeout(t);
        waiting.delete(id);
        res(r);
      });
      ws.send(JSON.stringify({ id, method }));
    });
  };
  return {
    call,
    async snapshot(path) {
      chunks = [];
      await call('HeapProfiler.takeHeapSnapshot');
      writeFileSync(path, chunks.join(''));
      chunks = undefined;
    },
    close: () => ws.close(),
  };
}

interface Place {
  /** Whether the bot's reply in it shows the upstream's text exactly. */
  done(): boolean;
  /** What the fake saw of a place not exact: for the notes, so that a loss explains itself. */
  why(): string;
}

async function soakOne(
  platform: 'slack' | 'discord',
  store: SoakStore,
  o: SoakOptions,
  log: (s: string) => void,
  progress: (run: SoakRun) => void,
): Promise<SoakRun> {
  const { places, every, warmupPlaces } = o;
  const d = SOAK_DEFAULTS;
  const db = await soakDb(store);
  const expected = replyText(DIRECTIVES);
  const emulator = await startEmulator({
    port: 0,
    apiKey: BENCH_API_KEY,
    bots: ['demo-bot'],
    maxRecordedRequests: 100,
  });
  const notes: string[] = [];
  let undelivered = 0;
  let retrying = 0;
  let send: (i: number) => Place;
  let env: Record<string, string>;
  let close: () => Promise<void>;
  if (platform === 'slack') {
    const shown = renderMrkdwn(expected);
    const fake = await startFakeSlack({ rateModel: 'token' });
    env = {
      SLACK_BOT_TOKEN: fake.botToken,
      SLACK_APP_TOKEN: fake.appToken,
      SLACK_API_URL: fake.apiUrl,
      SLACK_STREAMING: 'edit',
      FEEDBACK: 'off',
    };
    send = (i) => {
      const channel = `C0SOAK${String(i).padStart(6, '0')}`;
      const user = `U0SOAK${String(i % d.users).padStart(4, '0')}`;
      const posted = fake.userPost({ channel, user, text: `<@${fake.botUserId}> soak-${i} ${DIRECTIVES}` });
      // An event the fake could not deliver (its socket reconnecting) is counted: a reply missing
      // for that reason is the bench's, not the bridge's.
      const acks: string[] = [];
      // As Slack delivers: an envelope not acked in time (the app's socket reconnecting, or too
      // busy to answer) is sent again with the same event_id, at once, after 1 minute and after 5
      // (docs.slack.dev, Events API retries); a bridge must answer it once, however many arrive.
      const deliver = async (event: Record<string, unknown>, what: string) => {
        const body = fake.envelope(event);
        for (let attempt = 0; attempt < SLACK_RETRY_AFTER_MS.length; attempt++) {
          if (attempt > 0) {
            retrying += 1;
            await sleep(SLACK_RETRY_AFTER_MS[attempt] ?? 0);
            retrying -= 1;
          }
          try {
            await fake.deliverEvent(body, attempt > 0 ? { retryNum: attempt, retryReason: 'timeout' } : {});
            acks.push(attempt > 0 ? `${what} acked on retry ${attempt}` : `${what} acked`);
            return;
          } catch (err) {
            undelivered += 1;
            acks.push(`${what}: ${String(err)}`);
          }
        }
      };
      if (posted.mention) void deliver(posted.mention, 'app_mention');
      void deliver(posted.message, 'message');
      return {
        done: () => fake.botMessages(channel, posted.ts).at(-1)?.text === shown,
        why: () => {
          const last = fake.botMessages(channel, posted.ts).at(-1)?.text;
          const all = fake.botMessages(channel).length;
          return `${channel} at ${Date.now() - t0} ms: ${acks.join(', ') || 'no ack yet'}; bot messages in channel ${all}; last in thread ${last === undefined ? 'none' : JSON.stringify(last.slice(0, 60))}`;
        },
      };
    };
    close = () => fake.close();
  } else {
    const fake = await startFakeDiscord();
    const guild = fake.addGuild('soak');
    // Many parent channels: the fake limits each channel's writes (5 per 5 s), threads included.
    // Warm-up: discord.js keeps each channel's last 25 messages (cache-limits.ts), so the users'
    // messages fill 200 x 25 entries over the first 5,000 places before the heap levels off.
    const parents = Array.from({ length: 200 }, (_, i) => fake.addChannel(guild, `soak-${i}`));
    const users = Array.from({ length: d.users }, () => fake.state.nextId());
    env = {
      DISCORD_BOT_TOKEN: fake.token,
      DISCORD_API_URL: fake.apiUrl,
      DISCORD_REPLY_MODE: 'thread',
      FEEDBACK: 'off',
    };
    send = (i) => {
      const json = fake.dispatchMessage({
        channelId: parents[i % parents.length] ?? '',
        authorId: users[i % users.length] ?? '',
        content: `<@${fake.botUser.id}> soak-${i} ${DIRECTIVES}`,
        mentionsBot: true,
      });
      const thread = String(json.id);
      return {
        done: () => fake.botMessages(thread).at(-1)?.content === expected,
        why: () => {
          const last = fake.botMessages(thread).at(-1)?.content;
          return `thread ${thread}: last bot message ${last === undefined ? 'none' : JSON.stringify(last.slice(0, 60))}`;
        },
      };
    };
    close = () => fake.close();
  }
  let bridge: BridgeProcess | undefined;
  let cdp: Awaited<ReturnType<typeof inspector>> | undefined;
  const samples: SoakSample[] = [];
  let exact = 0;
  let late: Place[] = [];
  let lateCount = 0;
  let peakRss = 0;
  const t0 = Date.now();
  let sent = 0;
  // The run so far: written after each sample too, so a run cut short still leaves its figures.
  const summary = (): SoakRun => {
    const after = samples.filter((s) => s.places >= warmupPlaces);
    const grown = samples.filter((s) => s.places > 0);
    return {
      platform,
      store,
      places: sent,
      exact,
      samples,
      warmupPlaces,
      heapGrowthMbPer1000: after.length >= 2 ? round(slope(after, (x) => x.heapMb) * 1000, 3) : null,
      peakRssMb: round(Math.max(peakRss, ...samples.map((s) => s.rssMb ?? 0)), 1),
      dbMbPer10000: grown.length >= 2 ? round(slope(grown, (x) => x.dbMb) * 10_000, 2) : null,
      repliesPerSecond: round(exact / Math.max(0.001, (Date.now() - t0) / 1000), 1),
      notes,
    };
  };
  try {
    bridge = await startBridge(
      { ...upstreamEnv(emulator.url), ...env, ...db.env },
      { nodeOptions: '--inspect=127.0.0.1:0' },
    );
    const b = bridge;
    cdp = await inspector(b);
    const c = cdp;
    const sample = async (n: number) => {
      await c.call('HeapProfiler.collectGarbage');
      await c.call('HeapProfiler.collectGarbage');
      const usage = await c.call('Runtime.getHeapUsage');
      const s: SoakSample = {
        places: n,
        heapMb: round(Number(usage.usedSize) / 2 ** 20, 2),
        rssMb: round(b.rssMb(), 1),
        dbMb: round(await db.sizeMb(b.dataDir), 2),
        seconds: round((Date.now() - t0) / 1000, 1),
      };
      samples.push(s);
      // After the RSS is read: a snapshot itself grows the RSS by the heap's size.
      if (o.snapshotDir !== undefined) {
        mkdirSync(o.snapshotDir, { recursive: true });
        await c.snapshot(join(o.snapshotDir, `${platform}-${store}-${n}.heapsnapshot`));
      }
      progress(summary());
      log(
        `bench: soak ${platform} (${store}): ${n} places: retained heap ${s.heapMb} MB, RSS ${s.rssMb} MB, database ${s.dbMb} MB, ${s.seconds} s`,
      );
    };
    await sample(0);
    while (sent < places) {
      const batch: Place[] = [];
      const end = Math.min(places, sent + d.batch);
      for (; sent < end; sent++) batch.push(send(sent));
      const start = Date.now();
      let open = batch;
      while (open.length > 0 && Date.now() - start < 30_000) {
        await sleep(open.length === batch.length ? 20 : 10);
        open = open.filter((p) => !p.done());
      }
      exact += batch.length - open.length;
      // Late is not lost: on a machine shared with other work a batch may take longer than 30 s.
      // A place still without its exact reply is checked again after every batch and at the end.
      if (open.length > 0) {
        lateCount += open.length;
        late.push(...open);
      }
      const before = late.length;
      late = late.filter((p) => !p.done());
      exact += before - late.length;
      peakRss = Math.max(peakRss, b.rssMb());
      if (Math.floor(sent / every) > Math.floor((sent - batch.length) / every) || sent === places) await sample(sent);
      if (late.length > 1000) {
        notes.push(`stopped at ${sent} places: ${late.length} replies not exact yet`);
        break;
      }
    }
    const lastCall = Date.now();
    // Two minutes, or as long as Slack would still retry an event not acked (5 minutes at most).
    while (late.length > 0 && (Date.now() - lastCall < 120_000 || (retrying > 0 && Date.now() - lastCall < 330_000))) {
      await sleep(200);
      const before = late.length;
      late = late.filter((p) => !p.done());
      exact += before - late.length;
    }
    if (undelivered > 0) notes.push(`${undelivered} deliveries of an event not acked (Slack sends it again)`);
    if (lateCount > 0) notes.push(`${lateCount} replies took longer than 30 s after their batch was sent`);
    if (late.length > 0) notes.push(`${late.length} replies not exact 2 minutes after the last place`);
    for (const p of late.slice(0, 3)) notes.push(`not exact: ${p.why()}`);
    if (late.length > 3) notes.push(`not exact, the last: ${late.at(-1)?.why()}`);
  } finally {
    cdp?.close();
    await bridge?.stop().catch(() => null);
    await close().catch(() => {});
    await emulator.close().catch(() => {});
    await db.close().catch((err: unknown) => notes.push(`database not dropped: ${String(err)}`));
  }
  return summary();
}

/** Least-squares slope of one figure (MB) over places. */
function slope(s: readonly SoakSample[], y: (x: SoakSample) => number | null): number {
  const n = s.length;
  const mx = s.reduce((a, x) => a + x.places, 0) / n;
  const my = s.reduce((a, x) => a + (y(x) ?? 0), 0) / n;
  let num = 0;
  let den = 0;
  for (const x of s) {
    num += (x.places - mx) * ((y(x) ?? 0) - my);
    den += (x.places - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

export async function runSoak(opts: SoakOptions, log: (s: string) => void): Promise<SoakResult> {
  const runs: SoakRun[] = [];
  const result = (r: SoakRun[]): SoakResult => ({
    places: opts.places,
    every: opts.every,
    users: SOAK_DEFAULTS.users,
    runs: r,
  });
  for (const p of opts.platforms) {
    for (const store of opts.stores) {
      log(`bench: soak ${p} (${store}): ${opts.places} new places ...`);
      const done = [...runs];
      runs.push(await soakOne(p, store, opts, log, (run) => opts.onProgress?.(result([...done, run]))));
    }
  }
  return result(runs);
}

export function formatSoak(r: SoakResult): string {
  const lines = [
    `Soak: ${r.places} new places per platform from ${r.users} users, a GC forced every ${r.every} (retained heap after it).`,
  ];
  for (const run of r.runs) {
    lines.push(
      `- ${run.platform} (${run.store}): ${run.exact}/${run.places} exact, ${run.repliesPerSecond} replies/s; retained heap after ${run.warmupPlaces} places: ${run.heapGrowthMbPer1000 ?? '–'} MB per 1,000 places; peak RSS ${run.peakRssMb} MB; database ${run.dbMbPer10000 ?? '–'} MB per 10,000 places`,
    );
    lines.push(
      `  places: ${run.samples.map((s) => s.places).join(' / ')}`,
      `  heap MB: ${run.samples.map((s) => s.heapMb).join(' / ')}`,
      `  RSS MB: ${run.samples.map((s) => s.rssMb).join(' / ')}`,
      `  ${run.store === 'pg' ? 'PostgreSQL tables' : 'SQLite file + WAL'} MB: ${run.samples.map((s) => s.dbMb).join(' / ')}`,
    );
    for (const n of run.notes.slice(0, 5)) lines.push(`  note: ${n}`);
  }
  return lines.join('\n');
}
