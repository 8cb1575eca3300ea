import { setMaxListeners } from 'node:events';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startEmulator } from '../src/emulator/index.js';
import { replyText } from '../src/emulator/replies.js';
import { BENCH_API_KEY, metricSum, startBridge, upstreamEnv } from './bridge-process.js';
import { type DecodingResult, runDecoding } from './decode.js';
import { type BurstsResult, formatBursts, runBursts } from './bursts.js';
import { formatFirstBursts, runFirstBursts } from './burst-runs.js';
import { formatDiscordLong, runDiscordLong } from './discord-long.js';
import { type FloodResult, formatFlood, runFlood } from './flood.js';
import { formatFaults, runFaults } from './faults.js';
import { sigtermStressLine } from './sigterm-stress.js';
import { formatSoak, runSoak, SOAK_DEFAULTS, type SoakResult } from './soak.js';
import { type HostileResult, runHostile } from './hostile.js';
import { formatMarkdown, type MarkdownResult, runMarkdown } from './markdown.js';
import { runNaiveLevel } from './naive.js';
import { formatTable, type LevelResult, type LoneResult, type NaiveResult } from './report.js';
import { formatReplicas } from './replica-report.js';
import { REPLICA_DEFAULTS, type ReplicaResult, runReplicaBench } from './replicas.js';
import { discordRig, type Platform, type PlatformRig, type ReplyHandle, slackRig } from './rigs.js';
import { runPathSection } from './path.js';
import { percentile, round } from './text.js';
import { isRateModelName, RATE_MODEL_NAMES, type RateModelName } from '../test/fakes/slack/rate-models.js';
import { startTimingProxy } from '../test/fakes/timing-proxy.js';

// `npm run bench`: the real bridge (a child process: real Bolt, discord.js, undici, SQLite)
// between the emulator and the loopback fakes with their rate limits on, at several levels of
// concurrent replies; plus a naive post-and-edit-every-chunk client for comparison.

const { values: args } = parseArgs({
  options: {
    platform: { type: 'string', default: 'all' },
    levels: { type: 'string', default: '1,10,50,200' },
    'slack-models': { type: 'string', default: 'token,fixed-window,strict' },
    'slack-levels': { type: 'string', default: '1,20,200' },
    lone: { type: 'string', default: '5' },
    'naive-levels': { type: 'string', default: '1,10,50' },
    'per-channel': { type: 'string', default: '4' },
    'max-level-seconds': { type: 'string', default: '60' },
    long: { type: 'string', default: '3000' },
    chunks: { type: 'string', default: '150' },
    delay: { type: 'string', default: '20' },
    out: { type: 'string' },
    /** Only the in-process decoding section (seconds), no bridge levels. */
    'decode-only': { type: 'boolean', default: false },
    /** Only the hostile-input section (bench/hostile.ts), about 1 minute. */
    'hostile-only': { type: 'boolean', default: false },
    'skip-hostile': { type: 'boolean', default: false },
    /** Only the pathological-Markdown section (bench/markdown.ts), about 1 minute. */
    'markdown-only': { type: 'boolean', default: false },
    'skip-markdown': { type: 'boolean', default: false },
    /** Only the several-replicas section (bench/replicas.ts), about 2 minutes; needs PostgreSQL. */
    'replicas-only': { type: 'boolean', default: false },
    'skip-replicas': { type: 'boolean', default: false },
    /** Only the flood section (bench/flood.ts: fair turns), under a minute. */
    'flood-only': { type: 'boolean', default: false },
    'skip-flood': { type: 'boolean', default: false },
    /** Only the repeated-bursts section (bench/bursts.ts), about 90 s per model. */
    'bursts-only': { type: 'boolean', default: false },
    'skip-bursts': { type: 'boolean', default: false },
    /** Rate models of the bursts section (default: every model of test/fakes/slack/rate-models.ts). */
    'burst-models': { type: 'string', default: RATE_MODEL_NAMES.join(',') },
    /** With --bursts-only: only the first burst, N times per model (bench/burst-runs.ts). */
    'bursts-runs': { type: 'string', default: '0' },
    /** Only one long Discord reply, N times (bench/discord-long.ts), with --long/--chunks/--delay. */
    'discord-long-runs': { type: 'string', default: '0' },
    'replica-counts': { type: 'string', default: REPLICA_DEFAULTS.scaleReplicas.join(',') },
    /** Only the path section (bench/path.ts): the files one message runs, per platform. */
    'path-only': { type: 'boolean', default: false },
    'write-walk': { type: 'boolean', default: false },
    /** Only the lost-answers section (bench/faults.ts): 200 replies a run, 5% of answers lost. */
    faults: { type: 'boolean', default: false },
    'faults-seed': { type: 'string' },
    /** Only the soak section (bench/soak.ts): new places one after another, retained heap and RSS. */
    soak: { type: 'boolean', default: false },
    'soak-places': { type: 'string', default: String(SOAK_DEFAULTS.places) },
    'soak-every': { type: 'string', default: String(SOAK_DEFAULTS.every) },
    'soak-warmup': { type: 'string', default: String(SOAK_DEFAULTS.warmupPlaces) },
    'soak-platforms': { type: 'string', default: 'slack,discord' },
    /** Stores of the soak: sqlite, pg (a fresh database of its own on TEST_DATABASE_URL's server). */
    'soak-store': { type: 'string', default: 'sqlite' },
    /** A folder for a heap snapshot of the bridge at each soak sample (to diff; large files). */
    'soak-snapshots': { type: 'string' },
  },
});

const API_KEY = BENCH_API_KEY;
const LONG = Number(args.long);
const CHUNKS = Number(args.chunks);
const DELAY = Number(args.delay);
const DIRECTIVES = `[long ${LONG}] [chunks ${CHUNKS}] [delay ${DELAY}]`;
const EXPECTED = replyText(DIRECTIVES);
const PER_CHANNEL = Math.max(1, Number(args['per-channel']));
const MAX_LEVEL_MS = Number(args['max-level-seconds']) * 1000;
const levels = String(args.levels).split(',').filter(Boolean).map(Number);
const naiveLevels = String(args['naive-levels']).split(',').filter(Boolean).map(Number);
const platforms: Platform[] = args.platform === 'all' ? ['discord', 'slack'] : [args.platform as Platform];
const slackLevels = String(args['slack-levels']).split(',').filter(Boolean).map(Number);
const modelList = (flag: 'slack-models' | 'burst-models'): RateModelName[] =>
  String(args[flag])
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean)
    .map((m) => {
      if (!isRateModelName(m)) throw new Error(`--${flag}: ${m} is not one of ${RATE_MODEL_NAMES.join(', ')}`);
      return m;
    });
const slackModels = modelList('slack-models');
const burstModels = modelList('burst-models');
const LONE = Math.max(0, Number(args.lone));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runLevel(platform: Platform, level: number, model?: RateModelName): Promise<LevelResult> {
  const emulator = await startEmulator({ port: 0, apiKey: API_KEY, bots: ['demo-bot'], maxRecordedRequests: 1000 });
  const proxy = await startTimingProxy(emulator.url);
  const channels = Math.ceil(level / PER_CHANNEL);
  const rig: PlatformRig =
    platform === 'discord'
      ? await discordRig({ channels })
      : await slackRig({ channels, ...(model ? { rateModel: model } : {}) });
  const notes: string[] = [];
  let bridge: Awaited<ReturnType<typeof startBridge>> | undefined;
  try {
    bridge = await startBridge({
      ...upstreamEnv(proxy.url),
      ...rig.env,
    });
    const b = bridge;
    await sleep(200);
    const rssAtReady = b.rssMb();
    const cpu0 = b.cpuSeconds();
    const rl0 = rig.rateLimitHits();
    const t0 = Date.now();
    const handles: ReplyHandle[] = [];
    const sends = Array.from({ length: level }, (_, i) =>
      rig.send(i, `${platform}${level}x${i}`, DIRECTIVES).then(
        (h) => handles.push(h),
        (err: unknown) => notes.push(`send ${i} failed: ${err instanceof Error ? err.message : String(err)}`),
      ),
    );
    await Promise.all(sends);

    // Done when every reply shows the upstream's text, or the bridge counted every reply as
    // ended and nothing was written for a second, or the level's time is up.
    const exactAt = new Map<string, number>();
    let peakRss = 0;
    let lastWrites = -1;
    let quietSince = Date.now();
    for (;;) {
      for (const h of handles) if (!exactAt.has(h.tag) && rig.exact(h, EXPECTED)) exactAt.set(h.tag, Date.now());
      peakRss = Math.max(peakRss, b.rssMb());
      if (exactAt.size === level) break;
      const m = await b.metrics().catch(() => '');
      const ended = ['finished', 'failed', 'interrupted'].reduce(
        (s, k) => s + metricSum(m, `bridge_replies_${k}_total`, { platform }),
        0,
      );
      const writes = metricSum(m, 'bridge_platform_writes_total');
      if (writes !== lastWrites) {
        lastWrites = writes;
        quietSince = Date.now();
      }
      if (ended >= level && Date.now() - quietSince > 1000) break;
      if (Date.now() - t0 > MAX_LEVEL_MS) {
        notes.push(`stopped after ${MAX_LEVEL_MS / 1000} s with ${exactAt.size}/${level} replies exact`);
        break;
      }
      await sleep(100);
    }
    const cpu1 = b.cpuSeconds();
    const peakHwm = b.peakRssMb();
    const metrics = await b.metrics().catch(() => '');

    const firstText: number[] = [];
    const finalText: number[] = [];
    let writes = 0;
    let lastFinal = t0;
    for (const h of handles) {
      const up = proxy.timings.get(h.tag);
      const ws = rig.writes(h);
      const ok = ws.filter((w) => w.status >= 200 && w.status < 300);
      writes += ok.length;
      const first = ok[0];
      const last = ok[ok.length - 1];
      if (up?.firstChunkAt !== undefined && first) firstText.push(first.at - up.firstChunkAt);
      if (exactAt.has(h.tag) && last) {
        if (up?.endAt !== undefined) finalText.push(last.at - up.endAt);
        lastFinal = Math.max(lastFinal, last.at);
      }
    }
    const exact = handles.filter((h) => rig.exact(h, EXPECTED)).length;
    if (exact < level) {
      let missing = 0;
      let short = 0;
      let differ = 0;
      for (const h of handles) {
        if (rig.exact(h, EXPECTED)) continue;
        const c = rig.shownChars(h, EXPECTED);
        if (c.shown === 0) missing += 1;
        else if (c.shown < c.full) short += 1;
        else differ += 1;
      }
      notes.push(
        `not exact at the end: ${missing} show nothing, ${short} show a shorter text (a write still to come), ${differ} differ`,
      );
      if (handles.length < level) notes.push(`${level - handles.length} messages could not be sent`);
    }
    const wall = (lastFinal - t0) / 1000;
    // The floor: when the best client without updates (post each reply once when it ends)
    // could have every reply final under the fake's model; both it and our last final are
    // given after the last upstream end, so the difference is what the bridge's scheduling costs.
    const ends = handles.flatMap((h) => {
      const endAt = proxy.timings.get(h.tag)?.endAt;
      return endAt === undefined ? [] : [{ h, endAt }];
    });
    const lastEnd = Math.max(...ends.map((e) => e.endAt));
    const floor = ends.length === level ? rig.floor(ends, t0) : undefined;
    const byBucket = rig.rateLimitHitsByBucket();
    if (exact < level && b.logTail.length > 0)
      notes.push(`bridge log tail: ${b.logTail.slice(-3).join(' | ').slice(0, 600)}`);
    return {
      platform,
      ...(rig.rateModel ? { model: rig.rateModel } : {}),
      level,
      channels,
      replies: level,
      exact,
      firstTextMs: { p50: round(percentile(firstText, 50)), p99: round(percentile(firstText, 99)) },
      finalTextMs: { p50: round(percentile(finalText, 50)), p99: round(percentile(finalText, 99)) },
      writesPerReply: round(writes / Math.max(1, handles.length), 2),
      rateLimited: rig.rateLimitHits() - rl0,
      bridgeCounted429: metricSum(metrics, 'bridge_platform_rate_limited_total'),
      rssAtReadyMb: round(rssAtReady),
      peakRssMb: round(Math.max(peakRss, Number.isFinite(peakHwm) ? peakHwm : 0)),
      cpuSecondsPerReply: round((cpu1 - cpu0) / Math.max(1, handles.length), 4),
      repliesPerSecond: round(exact / Math.max(0.001, wall), 2),
      wallSeconds: round(wall, 2),
      writesByMethod: rig.writesByMethod(),
      rateLimitedMaxPerBucket: Math.max(0, ...Object.values(byBucket)),
      floorAfterEndMs: floor === undefined ? null : round(floor - lastEnd, 0),
      lastFinalAfterEndMs: exact === level && ends.length === level ? round(lastFinal - lastEnd, 0) : null,
      notes,
    };
  } finally {
    await bridge?.stop().catch(() => null);
    await rig.close().catch(() => {});
    await proxy.close().catch(() => {});
    await emulator.close().catch(() => {});
  }
}

type LoneVariant = LoneResult['variant'];

/**
 * A bridge with nothing to do (idle RSS after a second), then `count` lone replies one after
 * another, each awaited until the platform shows it exact: the final text latency after the
 * upstream's end, with no other reply competing for the platform's buckets.
 */
async function runLone(variant: LoneVariant, count: number): Promise<LoneResult> {
  const emulator = await startEmulator({ port: 0, apiKey: API_KEY, bots: ['demo-bot'], maxRecordedRequests: 1000 });
  const proxy = await startTimingProxy(emulator.url);
  const rig: PlatformRig =
    variant === 'discord'
      ? await discordRig({ channels: 1 })
      : await slackRig({ channels: 1, rateModel: 'token', streaming: variant === 'slack-native' ? 'native' : 'edit' });
  const notes: string[] = [];
  let bridge: Awaited<ReturnType<typeof startBridge>> | undefined;
  try {
    bridge = await startBridge({
      ...upstreamEnv(proxy.url),
      ...rig.env,
    });
    await sleep(1000);
    const idleRss = bridge.rssMb();
    const finals: number[] = [];
    let exact = 0;
    for (let i = 0; i < count; i++) {
      const h = await rig.send(i, `${variant}-lone${i}`, DIRECTIVES);
      const t0 = Date.now();
      while (!rig.exact(h, EXPECTED) && Date.now() - t0 < 20_000) await sleep(20);
      if (!rig.exact(h, EXPECTED)) {
        notes.push(`lone ${i}: not exact after 20 s`);
        continue;
      }
      exact += 1;
      const ok = rig.writes(h).filter((w) => w.status >= 200 && w.status < 300);
      const endAt = proxy.timings.get(h.tag)?.endAt;
      const last = ok[ok.length - 1];
      if (endAt !== undefined && last) finals.push(last.at - endAt);
    }
    const steps = await stepLatencies(rig, proxy, variant, Math.min(count, STEP_REPLIES), notes);
    return {
      variant,
      replies: count,
      exact,
      idleRssMb: round(idleRss),
      finalTextMs: { p50: round(percentile(finals, 50)), p99: round(percentile(finals, 99)) },
      stepShownMs: { p50: round(percentile(steps, 50)), p99: round(percentile(steps, 99)) },
      notes,
    };
  } finally {
    await bridge?.stop().catch(() => null);
    await rig.close().catch(() => {});
    await proxy.close().catch(() => {});
    await emulator.close().catch(() => {});
  }
}

/** The lone replies that are an agent's steps (seed's `status` events) before a short answer. */
const STEP_REPLIES = 5;
const STEP_ASK = '[steps] [chunks 1] [delay 300]';

/**
 * `count` replies of `[steps]` one after another: for each, the first accepted platform write
 * after the upstream sent its first step event, minus that time (the step shown to the user).
 */
async function stepLatencies(
  rig: PlatformRig,
  proxy: Awaited<ReturnType<typeof startTimingProxy>>,
  variant: LoneVariant,
  count: number,
  notes: string[],
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const h = await rig.send(i, `${variant}-step${i}`, STEP_ASK);
    const t0 = Date.now();
    const shown = (): number | undefined => {
      const at = proxy.timings.get(h.tag)?.firstStepAt;
      if (at === undefined) return undefined;
      const w = rig.writes(h).find((x) => x.status >= 200 && x.status < 300 && x.at >= at);
      return w === undefined ? undefined : w.at - at;
    };
    while (shown() === undefined && Date.now() - t0 < 20_000) await sleep(20);
    const ms = shown();
    if (ms === undefined) notes.push(`step ${i}: not shown after 20 s`);
    else out.push(ms);
    // The reply ends before the next starts (its last write a moment after the upstream's end).
    while (proxy.timings.get(h.tag)?.endAt === undefined && Date.now() - t0 < 20_000) await sleep(20);
    await sleep(500);
  }
  return out;
}

/** `--soak`: only the soak section, written to bench/results/<date>-soak.json. */
async function soakMain(log: (s: string) => void): Promise<void> {
  const started = Date.now();
  const date = new Date().toISOString();
  const file = args.out ?? join('bench', 'results', `${date.slice(0, 10)}-soak.json`);
  mkdirSync(join(file, '..'), { recursive: true });
  const write = (soak: SoakResult) => {
    const doc = {
      date,
      machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version },
      soak,
      totalSeconds: round((Date.now() - started) / 1000, 1),
    };
    writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
    return doc;
  };
  const soak = await runSoak(
    {
      places: Math.max(1, Number(args['soak-places'])),
      every: Math.max(1, Number(args['soak-every'])),
      warmupPlaces: Math.max(0, Number(args['soak-warmup'])),
      platforms: String(args['soak-platforms'])
        .split(',')
        .filter((p): p is 'slack' | 'discord' => p === 'slack' || p === 'discord'),
      stores: String(args['soak-store'])
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
        .map((s) => {
          if (s !== 'sqlite' && s !== 'pg') throw new Error(`--soak-store: ${s} is not sqlite or pg`);
          return s;
        }),
      ...(args['soak-snapshots'] !== undefined ? { snapshotDir: String(args['soak-snapshots']) } : {}),
      // After each sample: a run cut short (the machine's deadline) still leaves its figures.
      onProgress: (r) => write(r),
    },
    log,
  );
  const doc = write(soak);
  process.stdout.write(`${formatSoak(soak)}\n`);
  log(`bench: wrote ${file} (${doc.totalSeconds} s)`);
}

/** A section run on its own: its table on stdout, its JSON (with commit and machine) to `name`. */
async function sectionMain<T>(name: string, run: (log: (s: string) => void) => Promise<T>, format: (r: T) => string) {
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const started = Date.now();
  const result = await run(log);
  const git = (a: string[]) => execFileSync('git', a, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  const doc = {
    date: new Date().toISOString(),
    commit: git(['rev-parse', '--short', 'HEAD']),
    dirtySources: git(['status', '--porcelain', '--', 'src']) !== '',
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version },
    [name]: result,
    totalSeconds: round((Date.now() - started) / 1000, 1),
  };
  process.stdout.write(`${format(result)}\n`);
  const file = args.out ?? join('bench', 'results', `${doc.date.slice(0, 10)}-${name}.json`);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
  log(`bench: wrote ${file} (${doc.totalSeconds} s)`);
}

/** `--bursts-only --bursts-runs N`: bursts up to a channel's 4 streaming, N times per model. */
const firstBurstsMain = () =>
  sectionMain('bursts-runs', (log) => runFirstBursts(burstModels, Number(args['bursts-runs']), log), formatFirstBursts);

/** `--discord-long-runs N`: one long Discord reply N times (each a fresh bridge). */
const discordLongMain = () =>
  sectionMain(
    'discord-long',
    (log) => runDiscordLong(Number(args['discord-long-runs']), DIRECTIVES, log),
    formatDiscordLong,
  );

async function main(): Promise<void> {
  if (args['path-only'] === true) return runPathSection(console.log, args['write-walk'] === true);
  // Many concurrent fetches share abort signals inside undici and the emulator; not a leak.
  setMaxListeners(0);
  if (args.soak === true) return soakMain((s) => process.stderr.write(`${s}\n`));
  if (args['bursts-only'] === true && Number(args['bursts-runs']) > 0) return firstBurstsMain();
  if (Number(args['discord-long-runs']) > 0) return discordLongMain();
  const started = Date.now();
  const results: LevelResult[] = [];
  const naive: NaiveResult[] = [];
  const lone: LoneResult[] = [];
  const log = (s: string) => process.stderr.write(`${s}\n`);
  if (args.faults === true) {
    const seed = args['faults-seed'] === undefined ? undefined : Number(args['faults-seed']);
    const faults = await runFaults(log, seed);
    const date = new Date().toISOString();
    const file = args.out ?? join('bench', 'results', `${date.slice(0, 10)}-faults.json`);
    mkdirSync(join('bench', 'results'), { recursive: true });
    writeFileSync(file, `${JSON.stringify({ date, cpus: cpus().length, faults }, null, 2)}\n`);
    process.stdout.write(`${formatFaults(faults)}\n`);
    log(`bench: wrote ${file}`);
    return;
  }
  log(
    `bench: ${platforms.join('+')}: discord at ${levels.join(', ')}, slack at ${slackLevels.join(', ')} under ${slackModels.join(', ')}; replies of ${LONG} chars in ${CHUNKS} chunks, ${DELAY} ms apart`,
  );
  const markdownOnly = args['markdown-only'] === true;
  const hostileOnly = args['hostile-only'] === true || markdownOnly;
  const replicasOnly = args['replicas-only'] === true;
  const floodOnly = args['flood-only'] === true;
  const burstsOnly = args['bursts-only'] === true;
  let decoding: DecodingResult | undefined;
  if (!hostileOnly && !replicasOnly && !floodOnly && !burstsOnly) {
    log('bench: decoding ...');
    decoding = runDecoding();
    log(`bench: decoding: 20,000 application/json chunks in ${decoding.json20k.ms} ms`);
  }
  const decodeOnly = args['decode-only'] === true || hostileOnly || replicasOnly || floodOnly || burstsOnly;
  for (const platform of decodeOnly ? [] : platforms) {
    const runs: { level: number; model?: RateModelName }[] =
      platform === 'slack'
        ? slackModels.flatMap((model) => slackLevels.map((level) => ({ level, model })))
        : levels.map((level) => ({ level }));
    for (const { level, model } of runs) {
      const name = `${platform}${model ? ` [${model}]` : ''} ${level}`;
      log(`bench: ${name} ...`);
      const r = await runLevel(platform, level, model);
      log(`bench: ${name}: ${r.exact}/${r.replies} exact in ${r.wallSeconds} s`);
      results.push(r);
    }
  }
  if (LONE > 0 && !decodeOnly) {
    const variants: LoneVariant[] = [];
    if (platforms.includes('slack')) variants.push('slack-edit', 'slack-native');
    if (platforms.includes('discord')) variants.push('discord');
    for (const v of variants) {
      log(`bench: lone ${v} x${LONE} ...`);
      lone.push(await runLone(v, LONE));
    }
  }
  for (const level of decodeOnly ? [] : naiveLevels) {
    log(`bench: naive discord ${level} ...`);
    naive.push(await runNaiveLevel(level, { apiKey: API_KEY, directives: DIRECTIVES, expected: EXPECTED }));
  }
  let hostile: HostileResult | undefined;
  let flood: FloodResult | undefined;
  if (floodOnly || (args['skip-flood'] !== true && !decodeOnly && !markdownOnly)) flood = await runFlood(log);
  if (!markdownOnly && !floodOnly && (hostileOnly || (args['skip-hostile'] !== true && !decodeOnly))) {
    log('bench: hostile input ...');
    hostile = await runHostile({}, log);
  }
  let markdown: MarkdownResult | undefined;
  if (markdownOnly || (args['skip-markdown'] !== true && !decodeOnly)) {
    log('bench: pathological Markdown ...');
    markdown = await runMarkdown({}, log);
  }
  let bursts: BurstsResult | undefined;
  if (burstsOnly || (args['skip-bursts'] !== true && !decodeOnly && !markdownOnly)) {
    bursts = await runBursts(burstModels, log);
  }
  let replicas: ReplicaResult | undefined;
  if (!markdownOnly && !burstsOnly && (replicasOnly || (args['skip-replicas'] !== true && !decodeOnly))) {
    const scaleReplicas = String(args['replica-counts']).split(',').filter(Boolean).map(Number);
    replicas = await runReplicaBench({ ...REPLICA_DEFAULTS, scaleReplicas }, log);
  }
  const machine = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGb: round(totalmem() / 2 ** 30, 1),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
  const git = (a: string[]) => {
    try {
      return execFileSync('git', a, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  const doc = {
    date: new Date().toISOString(),
    commit: git(['rev-parse', '--short', 'HEAD']) || 'unknown',
    dirtySources: git(['status', '--porcelain', '--', 'src']) !== '',
    machine,
    workload: {
      replyChars: LONG,
      chunks: CHUNKS,
      chunkDelayMs: DELAY,
      repliesPerChannel: PER_CHANNEL,
      upstream: 'emulator Form A, sse-json, via a timing proxy',
      bridge:
        'node dist/cli.js start (child process), LOG_LEVEL=warn, MAX_CONCURRENT_REPLIES=256, STREAM_EDIT_INTERVAL_MS default',
      fakes: `test/fakes with rate limits on: Discord 5 writes / 5 s per channel; Slack under the models ${slackModels.join(', ')} (test/fakes/slack/rate-models.ts)`,
    },
    results,
    naive,
    decoding,
    hostile,
    markdown,
    replicas,
    lone,
    flood,
    bursts,
    totalSeconds: round((Date.now() - started) / 1000, 1),
  };
  process.stdout.write(
    `${formatTable(doc)}\n${markdown ? `\n${formatMarkdown(markdown)}\n` : ''}${replicas ? `\n${formatReplicas(replicas, machine)}\n` : ''}${flood ? `\n${formatFlood(flood)}\n` : ''}${bursts ? `\n${formatBursts(bursts)}\n` : ''}\n${sigtermStressLine()}\n`,
  );
  const file =
    args.out ??
    join(
      'bench',
      'results',
      `${doc.date.slice(0, 10)}-${markdownOnly ? 'markdown' : hostileOnly ? 'hostile' : replicasOnly ? 'replicas' : floodOnly ? 'flood' : burstsOnly ? 'bursts' : args.platform === 'all' ? 'all' : String(args.platform)}.json`,
    );
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
  log(`bench: wrote ${file} (${doc.totalSeconds} s)`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
