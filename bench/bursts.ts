import { startEmulator } from '../src/emulator/index.js';
import { replyText } from '../src/emulator/replies.js';
import type { RateModelName } from '../test/fakes/slack/rate-models.js';
import { startTimingProxy } from '../test/fakes/timing-proxy.js';
import { BENCH_API_KEY, type BridgeProcess, startBridge, upstreamEnv } from './bridge-process.js';
import { type ReplyHandle, slackRig } from './rigs.js';
import { percentile, round } from './text.js';

// Repeated bursts (issue 23): on ONE bridge process (what it learned about the workspace's
// buckets carries from burst to burst), four bursts of 20 Slack mentions in 5 channels, 25 s
// apart, each reply ~3,000 characters streamed by the emulator over about 3 s. Per burst: the
// first-text p50 (upstream's first chunk → the reply's first accepted write), the last final
// after the last upstream end, the fake's 429s during the burst, and exactness (every reply's
// final text equals the upstream's text as Slack renders it). One run per rate model of
// test/fakes/slack/rate-models.ts; each waits for its bursts' schedule, about 90 s.

export interface BurstFigure {
  burst: number;
  replies: number;
  exact: number;
  /** Replies whose final text (after the wait) differs from the upstream's text as rendered. */
  inexact: number;
  firstTextP50Ms: number | null;
  firstTextP99Ms: number | null;
  /** The burst's last final write after its last upstream end (ms); null if not all exact. */
  lastFinalAfterEndMs: number | null;
  rateLimited: number;
  writesByMethod: Record<string, number>;
}

export interface BurstsRun {
  model: RateModelName;
  bursts: BurstFigure[];
  peakRssMb: number | null;
  seconds: number;
  notes: string[];
}

export interface BurstsResult {
  burstCount: number;
  repliesPerBurst: number;
  channels: number;
  gapSeconds: number;
  replyChars: number;
  runs: BurstsRun[];
}

export const BURSTS_DEFAULTS = { bursts: 4, replies: 20, channels: 5, gapMs: 25_000, long: 3000, chunks: 150 };

/** One reply of a burst as it happened, in ms after the burst's first mention was sent. */
export interface ReplyTimeline {
  channel: number;
  firstChunkMs: number | null;
  endMs: number | null;
  /** Its posts and edits: `method@ms` accepted, `method@ms:429` refused (`:4xx` otherwise). */
  writes: string[];
}

export interface ModelRunOptions {
  /** Bursts to run (default BURSTS_DEFAULTS.bursts). */
  bursts?: number;
  /** Every reply's writes of each burst; returns true to stop after that burst. */
  timeline?: (burst: number, replies: ReplyTimeline[]) => boolean | void;
}

const API_KEY = BENCH_API_KEY;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runModel(
  model: RateModelName,
  log: (s: string) => void,
  opts: ModelRunOptions = {},
): Promise<BurstsRun> {
  const d = BURSTS_DEFAULTS;
  const burstCount = opts.bursts ?? d.bursts;
  const directives = `[long ${d.long}] [chunks ${d.chunks}] [delay 20]`;
  const expected = replyText(directives);
  const emulator = await startEmulator({ port: 0, apiKey: API_KEY, bots: ['demo-bot'], maxRecordedRequests: 1000 });
  const proxy = await startTimingProxy(emulator.url);
  const rig = await slackRig({ channels: d.channels, rateModel: model });
  const notes: string[] = [];
  const bursts: BurstFigure[] = [];
  let bridge: BridgeProcess | undefined;
  const started = Date.now();
  let peakRss = 0;
  try {
    bridge = await startBridge({
      ...upstreamEnv(proxy.url),
      ...rig.env,
    });
    const b = bridge;
    await sleep(200);
    const t0 = Date.now();
    for (let burst = 0; burst < burstCount; burst++) {
      const startAt = t0 + burst * d.gapMs;
      if (Date.now() < startAt) await sleep(startAt - Date.now());
      const rl0 = rig.rateLimitHits();
      const methods0 = rig.writesByMethod();
      const handles: ReplyHandle[] = [];
      const channelOf = new Map<string, number>();
      const sentAt = Date.now();
      await Promise.all(
        Array.from({ length: d.replies }, (_, i) =>
          rig.send(i, `burst${burst}x${i}`, directives).then(
            (h) => {
              handles.push(h);
              channelOf.set(h.tag, i % d.channels);
            },
            (err: unknown) => notes.push(`burst ${burst + 1} send ${i}: ${String(err)}`),
          ),
        ),
      );
      // Until every reply is exact, or the burst's slot (less a second) is over.
      const deadline = startAt + d.gapMs - 1000;
      while (Date.now() < deadline && !handles.every((h) => rig.exact(h, expected))) {
        peakRss = Math.max(peakRss, b.rssMb());
        await sleep(100);
      }
      bursts.push(figure(burst, handles, expected, rl0, methods0));
      if (opts.timeline?.(burst, timeline(handles, channelOf, sentAt)) === true) break;
      const f = bursts[bursts.length - 1] as BurstFigure;
      log(`bench: bursts [${model}] ${formatBurst(f)}`);
    }
    peakRss = Math.max(peakRss, b.peakRssMb());

    function timeline(handles: ReplyHandle[], channelOf: Map<string, number>, at0: number): ReplyTimeline[] {
      const rel = (t: number | undefined) => (t === undefined ? null : t - at0);
      return handles
        .map((h) => {
          const up = proxy.timings.get(h.tag);
          return {
            channel: channelOf.get(h.tag) ?? -1,
            firstChunkMs: rel(up?.firstChunkAt),
            endMs: rel(up?.endAt),
            writes: rig
              .writes(h)
              .map((w) => `${w.kind.replace(/^chat\./, '')}@${w.at - at0}${w.status === 200 ? '' : `:${w.status}`}`),
          };
        })
        .sort((a, b) => a.channel - b.channel || (a.endMs ?? 0) - (b.endMs ?? 0));
    }

    function figure(
      burst: number,
      handles: ReplyHandle[],
      exp: string,
      rl0: number,
      methods0: Record<string, number>,
    ): BurstFigure {
      const first: number[] = [];
      let lastFinal = 0;
      let lastEnd = 0;
      for (const h of handles) {
        const up = proxy.timings.get(h.tag);
        const ok = rig.writes(h).filter((w) => w.status >= 200 && w.status < 300);
        const w0 = ok[0];
        const wl = ok[ok.length - 1];
        if (up?.firstChunkAt !== undefined && w0) first.push(w0.at - up.firstChunkAt);
        if (up?.endAt !== undefined) lastEnd = Math.max(lastEnd, up.endAt);
        if (wl) lastFinal = Math.max(lastFinal, wl.at);
      }
      const exact = handles.filter((h) => rig.exact(h, exp)).length;
      const methods = rig.writesByMethod();
      const delta: Record<string, number> = {};
      for (const [k, v] of Object.entries(methods)) if (v - (methods0[k] ?? 0) > 0) delta[k] = v - (methods0[k] ?? 0);
      return {
        burst: burst + 1,
        replies: d.replies,
        exact,
        inexact: d.replies - exact,
        firstTextP50Ms: round(percentile(first, 50), 0),
        firstTextP99Ms: round(percentile(first, 99), 0),
        lastFinalAfterEndMs: exact === d.replies && lastEnd > 0 ? round(lastFinal - lastEnd, 0) : null,
        rateLimited: rig.rateLimitHits() - rl0,
        writesByMethod: delta,
      };
    }
  } finally {
    await bridge?.stop().catch(() => null);
    await rig.close().catch(() => {});
    await proxy.close().catch(() => {});
    await emulator.close().catch(() => {});
  }
  return { model, bursts, peakRssMb: round(peakRss), seconds: (Date.now() - started) / 1000, notes };
}

export async function runBursts(models: readonly RateModelName[], log: (s: string) => void): Promise<BurstsResult> {
  const runs: BurstsRun[] = [];
  for (const model of models) {
    log(`bench: bursts under ${model} (about 90 s) ...`);
    runs.push(await runModel(model, log));
  }
  const d = BURSTS_DEFAULTS;
  return {
    burstCount: d.bursts,
    repliesPerBurst: d.replies,
    channels: d.channels,
    gapSeconds: d.gapMs / 1000,
    replyChars: d.long,
    runs,
  };
}

function formatBurst(f: BurstFigure): string {
  const last = f.lastFinalAfterEndMs === null ? 'not all exact' : `${f.lastFinalAfterEndMs} ms`;
  return `burst ${f.burst}: ${f.exact}/${f.replies} exact (${f.inexact} inexact), first text p50 ${f.firstTextP50Ms ?? '–'} ms (p99 ${f.firstTextP99Ms ?? '–'}), last final ${last} after the last upstream end, ${f.rateLimited} 429s`;
}

export function formatBursts(r: BurstsResult): string {
  const rows = r.runs.flatMap((run) =>
    run.bursts.map((f) => {
      const last = f.lastFinalAfterEndMs === null ? '–' : String(f.lastFinalAfterEndMs);
      const w = Object.entries(f.writesByMethod)
        .map(([k, v]) => `${k.replace(/^chat\./, '')} ${v}`)
        .join(', ');
      return `| ${run.model} | ${f.burst} | ${f.exact}/${f.replies} | ${f.firstTextP50Ms ?? '–'} / ${f.firstTextP99Ms ?? '–'} | ${last} | ${f.rateLimited} | ${w} |`;
    }),
  );
  const notes = r.runs.flatMap((run) => run.notes.map((n) => `- ${run.model}: ${n}`));
  const total = r.runs.reduce((s, run) => s + run.seconds, 0);
  return [
    `Repeated bursts (Slack, one bridge process per model): ${r.burstCount} bursts of ${r.repliesPerBurst} mentions in ${r.channels} channels, ${r.gapSeconds} s apart, ${r.replyChars}-character replies over about 3 s (${Math.round(total)} s in all).`,
    '',
    '| model | burst | exact | first text p50/p99 ms | last final after last end ms | 429s | writes (accepted) |',
    '| ----- | ----- | ----- | --------------------- | ---------------------------- | ---- | ----------------- |',
    ...rows,
    ...notes,
  ].join('\n');
}
