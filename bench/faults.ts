import { startEmulator } from '../src/emulator/index.js';
import { replyText } from '../src/emulator/replies.js';
import { ChaosController } from '../test/fakes/chaos.js';
import { startTimingProxy } from '../test/fakes/timing-proxy.js';
import { BENCH_API_KEY, metricSum, startBridge, upstreamEnv } from './bridge-process.js';
import { discordRig, type Platform, type PlatformRig, type ReplyHandle, slackRig } from './rigs.js';
import { percentile, round } from './text.js';

// `--faults` (issue 28): 200 replies while the fake loses the answer of 5% of the bridge's writes
// after they took effect (a cut connection or a 5xx), seeded and printed. Every reply must end
// exact and once: one message per part, none twice. The rich-refusal share is asked of the same
// seeded controller; a fake counts it only where it knows how to refuse a rich form (the refusal
// hook of the rich-content fakes), so `refusedRich` says how many were refused in fact.

export interface FaultsRun {
  platform: Platform;
  mode: string;
  replies: number;
  seed: number;
  lostAnswers: number;
  writesAsked: number;
  refusedRich: number;
  exact: number;
  /** Replies showing more messages than their parts (a write repeated blindly). */
  duplicated: number;
  finalTextMs: { p50: number | null; p99: number | null };
  wallSeconds: number | null;
  rateLimited: number;
  bridgeWriteErrors: number;
  notes: string[];
}

export interface FaultsResult {
  loseRate: number;
  refuseRate: number;
  runs: FaultsRun[];
}

const REPLIES = 200;
const LOSE_RATE = 0.05;
const REFUSE_RATE = 0.05;
const DIRECTIVES = '[long 900] [chunks 30] [delay 20]';
const EXPECTED = replyText(DIRECTIVES);
const RUN_LIMIT_MS = 240_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runOnce(platform: Platform, mode: 'edit' | 'native', seed: number): Promise<FaultsRun> {
  const emulator = await startEmulator({
    port: 0,
    apiKey: BENCH_API_KEY,
    bots: ['demo-bot'],
    maxRecordedRequests: 1000,
  });
  const proxy = await startTimingProxy(emulator.url);
  const chaos = new ChaosController({ seed, loseRate: LOSE_RATE, refuseRate: REFUSE_RATE });
  const rig: PlatformRig =
    platform === 'discord'
      ? await discordRig({ channels: 40, faults: chaos })
      : await slackRig({ channels: 40, rateModel: 'token', streaming: mode, faults: chaos });
  const notes: string[] = [];
  let bridge: Awaited<ReturnType<typeof startBridge>> | undefined;
  try {
    bridge = await startBridge({ ...upstreamEnv(proxy.url), ...rig.env });
    const t0 = Date.now();
    const handles: ReplyHandle[] = [];
    for (let i = 0; i < REPLIES; i++) handles.push(await rig.send(i, `faults${i}`, DIRECTIVES));
    const finalAt = new Map<ReplyHandle, number>();
    while (finalAt.size < handles.length && Date.now() - t0 < RUN_LIMIT_MS) {
      for (const h of handles) if (!finalAt.has(h) && rig.exact(h, EXPECTED)) finalAt.set(h, Date.now());
      await sleep(100);
    }
    // A blind repeat would show up a little after the reply looked done: look again after a pause.
    await sleep(3000);
    const exact = handles.filter((h) => rig.exact(h, EXPECTED)).length;
    const duplicated = handles.filter((h) => rig.messages(h) > 1).length;
    if (finalAt.size < handles.length)
      notes.push(`${handles.length - finalAt.size} replies not exact within the limit`);
    const finals = handles.flatMap((h) => {
      const at = finalAt.get(h);
      return at === undefined ? [] : [at - h.sentAt];
    });
    const metrics = await bridge.metrics().catch(() => '');
    return {
      platform,
      mode: platform === 'discord' ? 'thread' : mode,
      replies: REPLIES,
      seed,
      lostAnswers: chaos.injected.lost,
      writesAsked: chaos.injected.asked,
      refusedRich: chaos.injected.refused,
      exact,
      duplicated,
      finalTextMs: { p50: round(percentile(finals, 50)), p99: round(percentile(finals, 99)) },
      wallSeconds: round((Date.now() - t0) / 1000, 1),
      rateLimited: rig.rateLimitHits(),
      bridgeWriteErrors: metricSum(metrics, 'bridge_replies_failed_total'),
      notes,
    };
  } finally {
    await bridge?.stop().catch(() => null);
    await rig.close().catch(() => {});
    await proxy.close().catch(() => {});
    await emulator.close().catch(() => {});
  }
}

export async function runFaults(log: (s: string) => void, seedArg?: number): Promise<FaultsResult> {
  const seed = seedArg ?? Math.floor(Math.random() * 2 ** 31);
  log(`bench: faults: seed ${seed} (replay: npm run bench -- --faults --faults-seed ${seed})`);
  const runs: FaultsRun[] = [];
  for (const [platform, mode] of [
    ['slack', 'edit'],
    ['slack', 'native'],
    ['discord', 'edit'],
  ] as const) {
    log(`bench: faults: ${REPLIES} ${platform} ${mode} replies, ${LOSE_RATE * 100}% of answers lost ...`);
    const r = await runOnce(platform, mode, seed);
    log(`bench: faults: ${formatFaultsRun(r)}`);
    runs.push(r);
  }
  return { loseRate: LOSE_RATE, refuseRate: REFUSE_RATE, runs };
}

function formatFaultsRun(r: FaultsRun): string {
  return (
    `${r.platform} ${r.mode}: ${r.exact}/${r.replies} exact, ${r.duplicated} duplicated; ` +
    `${r.lostAnswers} of ${r.writesAsked} write answers lost, ${r.refusedRich} rich writes refused; ` +
    `final text p50 ${r.finalTextMs.p50} ms, p99 ${r.finalTextMs.p99} ms; ${r.wallSeconds} s; ` +
    `${r.rateLimited} 429s, ${r.bridgeWriteErrors} failed replies${r.notes.length ? `; ${r.notes.join('; ')}` : ''}`
  );
}

export function formatFaults(f: FaultsResult): string {
  return [
    `Faults: ${REPLIES} replies a run, ${f.loseRate * 100}% of write answers lost after the write took effect (seed ${f.runs[0]?.seed ?? '?'}).`,
    ...f.runs.map((r) => `- ${formatFaultsRun(r)}`),
  ].join('\n');
}
