import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { startEmulator } from '../src/emulator/index.js';
import { replyText } from '../src/emulator/replies.js';
import { startFakeDiscord } from '../test/fakes/discord/index.js';
import { floodBodies, type RawResult } from '../test/fakes/raw-http.js';
import { startFakeSlack } from '../test/fakes/slack/index.js';
import { BENCH_API_KEY, type BridgeProcess, metricSum, startBridge, upstreamEnv } from './bridge-process.js';
import { percentile, round } from './text.js';
import { startTimingProxy } from '../test/fakes/timing-proxy.js';

// The hostile-input section (issue 12): what oversized unsigned bodies cost the bridge's memory,
// whether /healthz stays quick under them and under a decoding-heavy upstream, and what 500 users
// at once see with the reply slots and the queue bounded. Every loop here has a deadline: a
// figure that misses its target is reported as it stands, the section never hangs.

const API_KEY = BENCH_API_KEY;
const BOT = 'demo-bot';
const MB = 2 ** 20;

export const HOSTILE_TARGETS = {
  floodRssGrowthMb: 30,
  healthzMs: 100,
  crowdAnsweredWithinMs: 10_000,
};

export interface HealthzFigure {
  samples: number;
  /** Requests that failed or took longer than the 5 s poll timeout. */
  errors: number;
  maxMs: number | null;
  p99Ms: number | null;
}

export interface FloodFigure {
  framing: 'content-length' | 'chunked';
  parallel: number;
  bodyMb: number;
  idleRssMb: number | null;
  peakRssMb: number | null;
  growthMb: number | null;
  /** Answers the clients got, by status ("none" when the server closed without one). */
  statuses: Record<string, number>;
  /** The most body any one client got to send before the answer came (MB). */
  maxSentBeforeAnswerMb: number | null;
  seconds: number | null;
  healthz: HealthzFigure;
}

export interface JsonStreamFigure {
  chunks: number;
  /** The upstream's first to last byte of the stream (ms), as this side wrote it. */
  upstreamMs: number | null;
  healthz: HealthzFigure;
  /** What the Slack thread showed at the end (first 80 characters). */
  shown: string | null;
}

export interface CrowdFigure {
  users: number;
  maxConcurrentReplies: number;
  maxQueuedReplies: number;
  /** At 10 s after the messages went out: users who saw reply text, a busy notice, an error, nothing. */
  replied: number;
  busy: number;
  error: number;
  nothing: number;
  /** First bot message with text in the user's channel or thread, minus the user's message (ms). */
  firstVisibleMs: { p50: number | null; p99: number | null };
  /** Replies whose final text equals the upstream's, once everything ended. */
  exactAtEnd: number;
  upstreamStreams: number;
  inFlightPeak: number | null;
  queueDepthPeak: number | null;
  /** bridge_replies_in_flight on the last sample (0 unless the deadline stopped the wait). */
  inFlightAtEnd: number | null;
  /** Most slots seen held at once by replies whose upstream stream had already ended. */
  heldAfterUpstreamEndPeak: number | null;
  /** From the last upstream end until bridge_replies_in_flight read 0 (null: not before the deadline). */
  msToZeroInFlight: number | null;
  /** Discord REST writes the fake recorded (thread creations, posts, edits, ...), and the last one's time. */
  platformWrites: number;
  lastPlatformWriteS: number | null;
  seconds: number | null;
}

export interface HostileResult {
  flood: FloodFigure[];
  json20k: JsonStreamFigure | null;
  crowd: CrowdFigure | null;
  notes: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));

// ---- /healthz poller, in a worker thread so the bench's own busy event loop (writing 800 MB,
// or 20,000 chunks) does not show up as the bridge's latency ----

const POLLER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { performance } = require('node:perf_hooks');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const lat = [];
let errors = 0;
let stop = false;
parentPort.on('message', () => { stop = true; });
function once() {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.get({ host: '127.0.0.1', port: workerData.port, path: '/healthz', agent, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 ? performance.now() - t0 : -1));
    });
    req.on('timeout', () => { req.destroy(); });
    req.on('error', () => resolve(-1));
  });
}
(async () => {
  while (!stop) {
    const t0 = performance.now();
    const ms = await once();
    if (ms >= 0) lat.push(ms); else errors++;
    const wait = workerData.intervalMs - (performance.now() - t0);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  agent.destroy();
  parentPort.postMessage({ lat, errors });
})();
`;

interface Poller {
  stop(): Promise<HealthzFigure>;
}

export function pollHealthz(port: number, intervalMs = 10): Poller {
  const worker = new Worker(POLLER, { eval: true, workerData: { port, intervalMs } });
  const result = new Promise<{ lat: number[]; errors: number }>((resolve) => {
    worker.once('message', (m: { lat: number[]; errors: number }) => resolve(m));
    worker.once('error', () => resolve({ lat: [], errors: -1 }));
    worker.once('exit', () => resolve({ lat: [], errors: -1 }));
  });
  return {
    async stop() {
      worker.postMessage('stop');
      // A poll in flight ends within its 5 s timeout; past that the worker is ended.
      const r = await Promise.race([result, sleep(8000).then(() => ({ lat: [] as number[], errors: -1 }))]);
      await worker.terminate();
      return {
        samples: r.lat.length,
        errors: r.errors,
        maxMs: round(r.lat.length > 0 ? Math.max(...r.lat) : null),
        p99Ms: round(percentile(r.lat, 99)),
      };
    },
  };
}

/** Samples VmRSS every `everyMs` until stopped; the peak seen. */
function sampleRss(b: BridgeProcess, everyMs = 50): { stop(): number } {
  let peak = b.rssMb();
  const t = setInterval(() => {
    const v = b.rssMb();
    if (Number.isFinite(v)) peak = Math.max(peak, v);
  }, everyMs);
  return {
    stop() {
      clearInterval(t);
      return peak;
    },
  };
}

/** Median VmRSS over `ms` (GC makes single samples jumpy). */
async function idleRss(b: BridgeProcess, ms = 1000): Promise<number> {
  const v: number[] = [];
  for (const end = Date.now() + ms; Date.now() < end;) {
    v.push(b.rssMb());
    await sleep(50);
  }
  return percentile(v, 50) ?? Number.NaN;
}

// ---- a decoding-heavy upstream: the emulator, except that every A2 stream is answered with
// `chunks` small application/json writes, one line of a pretty-printed document each ----

interface JsonUpstream {
  url: string;
  started?: number;
  ended?: number;
  close(): Promise<void>;
}

async function startJsonUpstream(target: string, chunks: number): Promise<JsonUpstream> {
  const t = new URL(target);
  const agent = new Agent({ keepAlive: true });
  // application/json, one small object a line (each its own chunk): 20,000 JSON.parse calls
  // and text events for the bridge, about 20,000 characters of reply.
  const words = 'lorem ipsum dolor sit amet ';
  const lines = Array.from({ length: chunks }, (_, i) => `${JSON.stringify({ delta: words[i % words.length] })}\n`);
  const up: JsonUpstream = { url: '', close: () => Promise.resolve() };
  const server: Server = createServer((req, res) => {
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && /\/stream$/.test(req.url ?? '')) {
        void (async () => {
          res.writeHead(200, { 'content-type': 'application/json', 'x-conversation-id': 'hostile-json' });
          res.flushHeaders();
          up.started = Date.now();
          // One write a turn, so the chunks leave as separate segments rather than one buffer.
          for (const l of lines) {
            if (res.destroyed) break;
            res.write(l);
            await nextTurn();
          }
          res.end();
          up.ended = Date.now();
        })();
        return;
      }
      const fwd = request(
        {
          host: t.hostname,
          port: t.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: t.host },
          agent,
        },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      fwd.on('error', () => res.destroy());
      fwd.end(Buffer.concat(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  up.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  up.close = async () => {
    server.closeAllConnections();
    agent.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return up;
}

// ---- 1 and 2: Slack in HTTP mode ----

async function flood(
  b: BridgeProcess,
  framing: FloodFigure['framing'],
  parallel: number,
  bytes: number,
): Promise<FloodFigure> {
  const idle = await idleRss(b);
  const poller = pollHealthz(b.port);
  const rss = sampleRss(b);
  const t0 = Date.now();
  let results: RawResult[] = [];
  let failure: unknown;
  try {
    results = await floodBodies({
      port: b.port,
      path: '/slack/events',
      bytes,
      parallel,
      ...(framing === 'chunked' ? { chunked: true } : {}),
    });
  } catch (err) {
    failure = err;
  }
  const seconds = (Date.now() - t0) / 1000;
  // "While and after": the memory of a body read and dropped shows a moment later.
  await sleep(1000);
  const peak = rss.stop();
  const healthz = await poller.stop();
  if (failure !== undefined) throw failure;
  const statuses: Record<string, number> = {};
  for (const r of results) {
    const k = r.status === undefined ? 'none' : String(r.status);
    statuses[k] = (statuses[k] ?? 0) + 1;
  }
  const maxSent = results.length > 0 ? Math.max(...results.map((r) => r.sentBeforeAnswer)) : Number.NaN;
  return {
    framing,
    parallel,
    bodyMb: round(bytes / MB) ?? 0,
    idleRssMb: round(idle),
    peakRssMb: round(peak),
    growthMb: round(peak - idle),
    statuses,
    maxSentBeforeAnswerMb: round(maxSent / MB, 2),
    seconds: round(seconds, 2),
    healthz,
  };
}

async function jsonStream(
  b: BridgeProcess,
  up: JsonUpstream,
  slack: Awaited<ReturnType<typeof startFakeSlack>>,
  chunks: number,
  notes: string[],
): Promise<JsonStreamFigure> {
  const poller = pollHealthz(b.port);
  let shown: string | null = null;
  let healthz: HealthzFigure;
  try {
    const channel = 'C0HOSTILE';
    const post = slack.userPost({ channel, user: 'U0HOSTILE', text: `<@${slack.botUserId}> stream me json` });
    const res = await slack.postSignedEvent(
      `http://127.0.0.1:${b.port}/slack/events`,
      slack.envelope(post.mention ?? {}),
    );
    if (res.status !== 200) notes.push(`json20k: signed event answered ${res.status}`);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const m = await b.metrics().catch(() => '');
      const ended = ['finished', 'failed', 'interrupted'].reduce(
        (s, k) => s + metricSum(m, `bridge_replies_${k}_total`, { platform: 'slack' }),
        0,
      );
      if (up.ended !== undefined && ended >= 1) break;
      if (Date.now() > deadline) {
        notes.push(
          `json20k: stopped after 60 s (upstream ${up.ended ? 'ended' : 'still streaming'}, replies ended ${ended})`,
        );
        break;
      }
      await sleep(50);
    }
    shown =
      slack
        .botMessages(channel, post.ts)
        .map((x) => x.text)
        .join(' | ')
        .slice(0, 80) || null;
  } finally {
    healthz = await poller.stop();
  }
  return {
    chunks,
    upstreamMs: up.started !== undefined && up.ended !== undefined ? up.ended - up.started : null,
    healthz,
    shown,
  };
}

async function slackHttpSection(
  out: HostileResult,
  opts: { floodParallel: number; floodBytes: number; jsonChunks: number },
  log: (s: string) => void,
): Promise<void> {
  const emulator = await startEmulator({ port: 0, apiKey: API_KEY, bots: [BOT], maxRecordedRequests: 100 });
  const up = await startJsonUpstream(emulator.url, opts.jsonChunks);
  const slack = await startFakeSlack();
  let bridge: BridgeProcess | undefined;
  try {
    bridge = await startBridge({
      ...upstreamEnv(up.url, BOT),
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: slack.signingSecret,
      SLACK_API_URL: slack.apiUrl,
    });
    await sleep(500);
    for (const framing of ['content-length', 'chunked'] as const) {
      log(`bench: hostile: ${opts.floodParallel} × ${opts.floodBytes / MB} MB unsigned bodies (${framing}) ...`);
      try {
        const f = await flood(bridge, framing, opts.floodParallel, opts.floodBytes);
        out.flood.push(f);
        log(`bench: hostile: RSS ${f.idleRssMb} → ${f.peakRssMb} MB, /healthz max ${f.healthz.maxMs} ms`);
      } catch (err) {
        out.notes.push(`flood ${framing} failed: ${errText(err)}`);
      }
    }
    log(`bench: hostile: ${opts.jsonChunks} application/json chunks from the upstream ...`);
    try {
      out.json20k = await jsonStream(bridge, up, slack, opts.jsonChunks, out.notes);
      log(`bench: hostile: upstream ${out.json20k.upstreamMs} ms, /healthz max ${out.json20k.healthz.maxMs} ms`);
    } catch (err) {
      out.notes.push(`json20k failed: ${errText(err)}`);
    }
    if (bridge.logTail.length > 0)
      out.notes.push(`slack bridge log tail: ${bridge.logTail.slice(-2).join(' | ').slice(0, 400)}`);
  } finally {
    await bridge?.stop().catch(() => null);
    await slack.close().catch(() => {});
    await up.close().catch(() => {});
    await emulator.close().catch(() => {});
  }
}

// ---- 3: 500 users at once on Discord ----

const BUSY_RE = /busy|try again/i;
const ERROR_RE = /went wrong/i;

async function crowdSection(
  out: HostileResult,
  opts: { users: number; maxConcurrent: number; maxQueued: number; directives: string; maxSeconds: number },
  log: (s: string) => void,
): Promise<void> {
  const emulator = await startEmulator({ port: 0, apiKey: API_KEY, bots: [BOT], maxRecordedRequests: 100 });
  const proxy = await startTimingProxy(emulator.url);
  // Discord: buckets are per channel and there is no global one in the fake, so one channel per
  // user (thread mode: each reply in its own thread) keeps the platform out of the figures.
  const discord = await startFakeDiscord();
  const guild = discord.addGuild('hostile');
  const channels = Array.from({ length: opts.users }, (_, i) => discord.addChannel(guild, `crowd-${i}`));
  let bridge: BridgeProcess | undefined;
  try {
    bridge = await startBridge({
      ...upstreamEnv(proxy.url, BOT),
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiUrl,
      MAX_CONCURRENT_REPLIES: String(opts.maxConcurrent),
      MAX_QUEUED_REPLIES: String(opts.maxQueued),
    });
    await discord.whenConnected();
    await sleep(500);
    const b = bridge;
    const bot = discord.botUser.id;
    /** Channel or thread id → user index; a thread has the id of the message it was opened from. */
    const whose = new Map<string, number>();
    const sentAt: number[] = [];
    const t0 = Date.now();
    for (let i = 0; i < opts.users; i++) {
      const channelId = channels[i] ?? '';
      whose.set(channelId, i);
      sentAt.push(Date.now());
      const json = discord.dispatchMessage({
        channelId,
        authorId: discord.state.nextId(),
        content: `<@${bot}> bench-h${i} ${opts.directives}`,
        mentionsBot: true,
      });
      whose.set(String(json.id), i);
    }

    let inFlightPeak = 0;
    let queuePeak = 0;
    let queueNow = 0;
    let lastInFlight = 0;
    const sample = async () => {
      const m = await b.metrics().catch(() => '');
      const inFlight = metricSum(m, 'bridge_replies_in_flight');
      inFlightPeak = Math.max(inFlightPeak, inFlight);
      queueNow = metricSum(m, 'bridge_queue_depth');
      queuePeak = Math.max(queuePeak, queueNow);
      lastInFlight = inFlight;
      return inFlight;
    };
    // What each user sees: the bot's messages in their channel and thread, at this moment.
    const shown = () => {
      const texts: string[][] = Array.from({ length: opts.users }, () => []);
      const first: number[] = Array.from({ length: opts.users }, () => Number.POSITIVE_INFINITY);
      for (const m of discord.state.messages.values()) {
        if (m.authorId !== bot || m.content === '') continue;
        const i = whose.get(m.channelId);
        if (i === undefined) continue;
        texts[i]?.push(m.content);
        first[i] = Math.min(first[i] ?? Number.POSITIVE_INFINITY, m.createdAt);
      }
      return { texts, first };
    };

    const windowEnd = t0 + HOSTILE_TARGETS.crowdAnsweredWithinMs;
    while (Date.now() < windowEnd) {
      await sample();
      const { first } = shown();
      if (first.every((x) => Number.isFinite(x))) break;
      await sleep(100);
    }
    const at10 = shown();
    let replied = 0;
    let busy = 0;
    let error = 0;
    let nothing = 0;
    const firstVisible: number[] = [];
    for (let i = 0; i < opts.users; i++) {
      const t = at10.texts[i] ?? [];
      const f = at10.first[i] ?? Number.POSITIVE_INFINITY;
      if (t.length === 0 || f > windowEnd) nothing += 1;
      else {
        firstVisible.push(f - (sentAt[i] ?? t0));
        if (t.some((x) => ERROR_RE.test(x))) error += 1;
        else if (t.some((x) => BUSY_RE.test(x))) busy += 1;
        else replied += 1;
      }
    }
    log(`bench: hostile: at 10 s ${replied} replied, ${busy} busy, ${error} error, ${nothing} nothing`);

    // Then until the bridge is idle: no reply in flight, none queued, every upstream stream
    // ended; or the deadline. Each sample also counts slots held by replies whose upstream
    // stream has already ended (the reply is still writing to the platform, or the slot leaked).
    const deadline = t0 + opts.maxSeconds * 1000;
    let heldAfterEndPeak = 0;
    const zeroes: number[] = [];
    for (;;) {
      const inFlight = await sample();
      const at = Date.now();
      const ts = [...proxy.timings.values()];
      const open = ts.filter((x) => x.endAt === undefined).length;
      heldAfterEndPeak = Math.max(heldAfterEndPeak, inFlight - open);
      if (inFlight === 0) zeroes.push(at);
      if (inFlight === 0 && open === 0 && queueNow === 0) break;
      if (at > deadline) {
        out.notes.push(
          `crowd: stopped after ${opts.maxSeconds} s with ${inFlight} in flight, ${queueNow} queued, ${open} upstream streams open`,
        );
        break;
      }
      await sleep(100);
    }
    const ends = [...proxy.timings.values()].map((x) => x.endAt ?? Number.NaN).filter(Number.isFinite);
    const lastEnd = ends.length > 0 ? Math.max(...ends) : Number.NaN;
    const zeroAt = zeroes.find((z) => z >= lastEnd);
    const msToZero = zeroAt === undefined ? null : zeroAt - lastEnd;
    const inFlightAtEnd = lastInFlight;
    const writes = discord.record.length;
    const kinds = new Map<string, number>();
    for (const r of discord.record) {
      const k = `${r.method} ${r.path.replace(/\d{5,}/g, ':id')}`;
      kinds.set(k, (kinds.get(k) ?? 0) + 1);
    }
    out.notes.push(`crowd: Discord writes by route: ${[...kinds].map(([k, v]) => `${v}× ${k}`).join(', ')}`);
    const lastWrite = discord.record.reduce((m, r) => Math.max(m, r.at), t0);
    // Exact: the reply's text (Discord joins split parts) equals what the emulator sent.
    const expected = replyText(opts.directives);
    const end = shown();
    const exactAtEnd = end.texts.filter((t) => t.join('') === expected).length;
    out.crowd = {
      users: opts.users,
      maxConcurrentReplies: opts.maxConcurrent,
      maxQueuedReplies: opts.maxQueued,
      replied,
      busy,
      error,
      nothing,
      firstVisibleMs: { p50: round(percentile(firstVisible, 50)), p99: round(percentile(firstVisible, 99)) },
      exactAtEnd,
      upstreamStreams: proxy.timings.size,
      inFlightPeak,
      queueDepthPeak: queuePeak,
      inFlightAtEnd,
      heldAfterUpstreamEndPeak: heldAfterEndPeak,
      msToZeroInFlight: msToZero,
      platformWrites: writes,
      lastPlatformWriteS: round((lastWrite - t0) / 1000, 2),
      seconds: round((Date.now() - t0) / 1000, 2),
    };
    if (b.logTail.length > 0)
      out.notes.push(`discord bridge log tail: ${b.logTail.slice(-2).join(' | ').slice(0, 400)}`);
  } finally {
    await bridge?.stop().catch(() => null);
    await discord.close().catch(() => {});
    await proxy.close().catch(() => {});
    await emulator.close().catch(() => {});
  }
}

export interface HostileOptions {
  floodParallel?: number;
  floodBytes?: number;
  jsonChunks?: number;
  users?: number;
  maxConcurrent?: number;
  maxQueued?: number;
  /** Emulator directives of each crowd reply. */
  directives?: string;
  /** Bound of the crowd part, from the first message to the end. */
  maxSeconds?: number;
}

export async function runHostile(o: HostileOptions, log: (s: string) => void): Promise<HostileResult> {
  const out: HostileResult = { flood: [], json20k: null, crowd: null, notes: [] };
  try {
    await slackHttpSection(
      out,
      { floodParallel: o.floodParallel ?? 8, floodBytes: o.floodBytes ?? 100 * MB, jsonChunks: o.jsonChunks ?? 20_000 },
      log,
    );
  } catch (err) {
    out.notes.push(`slack HTTP part failed: ${errText(err)}`);
  }
  log(`bench: hostile: ${o.users ?? 500} Discord users at once ...`);
  try {
    await crowdSection(
      out,
      {
        users: o.users ?? 500,
        maxConcurrent: o.maxConcurrent ?? 64,
        maxQueued: o.maxQueued ?? 256,
        directives: o.directives ?? '[long 200] [chunks 5] [delay 100]',
        maxSeconds: o.maxSeconds ?? 90,
      },
      log,
    );
  } catch (err) {
    out.notes.push(`crowd part failed: ${errText(err)}`);
  }
  return out;
}
