import { startEmulator } from '../src/emulator/index.js';
import { replyText } from '../src/emulator/replies.js';
import { startTimingProxy } from '../test/fakes/timing-proxy.js';
import { BENCH_API_KEY, type BridgeProcess, startBridge, upstreamEnv } from './bridge-process.js';
import { discordRig } from './rigs.js';
import { percentile, round } from './text.js';

// `--discord-long-runs N` (issue 31): one long Discord reply (thread mode, so the thread's own
// 5-writes-per-5-s bucket) N times, each on a fresh bridge, fake and emulator: how long after the
// upstream's end the reply is final, its writes (POST/PATCH, in ms after the upstream's first
// chunk, with any 429) and the fake's 429s. A reply longer than one message is several posts
// in one bucket, so the final can be the bucket's sixth write in 5 s.

export interface DiscordLongRun {
  run: number;
  exact: boolean;
  /** The last accepted write after the upstream's end (ms); null if not exact. */
  finalAfterEndMs: number | null;
  upstreamMs: number | null;
  rateLimited: number;
  /** `POST@ms` / `PATCH@ms` after the upstream's first chunk, `:429` when refused. */
  writes: string[];
}

export interface DiscordLongResult {
  directives: string;
  runs: DiscordLongRun[];
  finalAfterEndMs: { p50: number | null; max: number | null };
  rateLimitedTotal: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function oneRun(run: number, directives: string, expected: string): Promise<DiscordLongRun> {
  const emulator = await startEmulator({
    port: 0,
    apiKey: BENCH_API_KEY,
    bots: ['demo-bot'],
    maxRecordedRequests: 100,
  });
  const proxy = await startTimingProxy(emulator.url);
  const rig = await discordRig({ channels: 1 });
  let bridge: BridgeProcess | undefined;
  try {
    bridge = await startBridge({ ...upstreamEnv(proxy.url), ...rig.env });
    await sleep(500);
    const h = await rig.send(0, `long${run}`, directives);
    const t0 = Date.now();
    while (!rig.exact(h, expected) && Date.now() - t0 < 20_000) await sleep(20);
    const exact = rig.exact(h, expected);
    const up = proxy.timings.get(h.tag);
    const ws = rig.writes(h);
    const ok = ws.filter((w) => w.status >= 200 && w.status < 300);
    const last = ok[ok.length - 1];
    const base = up?.firstChunkAt ?? h.sentAt;
    return {
      run,
      exact,
      finalAfterEndMs: exact && last && up?.endAt !== undefined ? last.at - up.endAt : null,
      upstreamMs: up?.endAt !== undefined && up.firstChunkAt !== undefined ? up.endAt - up.firstChunkAt : null,
      rateLimited: rig.rateLimitHits(),
      writes: ws.map((w) => `${w.kind}@${w.at - base}${w.status >= 200 && w.status < 300 ? '' : `:${w.status}`}`),
    };
  } finally {
    await bridge?.stop().catch(() => null);
    await rig.close().catch(() => {});
    await proxy.close().catch(() => {});
    await emulator.close().catch(() => {});
  }
}

export async function runDiscordLong(
  runs: number,
  directives: string,
  log: (s: string) => void,
): Promise<DiscordLongResult> {
  const expected = replyText(directives);
  const out: DiscordLongRun[] = [];
  for (let run = 1; run <= runs; run++) {
    const r = await oneRun(run, directives, expected);
    out.push(r);
    log(
      `bench: discord long run ${run}/${runs}: ${r.exact ? `final ${r.finalAfterEndMs} ms after the end` : 'not exact'} (upstream ${r.upstreamMs} ms), ${r.rateLimited} 429s; writes ${r.writes.join(' ')}`,
    );
  }
  const finals = out.flatMap((r) => (r.finalAfterEndMs === null ? [] : [r.finalAfterEndMs]));
  return {
    directives,
    runs: out,
    finalAfterEndMs: { p50: round(percentile(finals, 50), 0), max: finals.length ? Math.max(...finals) : null },
    rateLimitedTotal: out.reduce((s, r) => s + r.rateLimited, 0),
  };
}

export function formatDiscordLong(r: DiscordLongResult): string {
  const finals = r.runs.map((x) => (x.finalAfterEndMs === null ? '–' : String(x.finalAfterEndMs))).join(', ');
  return [
    `Discord long reply (thread mode, ${r.directives}), ${r.runs.length} runs, each a fresh bridge and fake:`,
    `final after the upstream's end, ms: ${finals} (p50 ${r.finalAfterEndMs.p50 ?? '–'}, max ${r.finalAfterEndMs.max ?? '–'}); 429s: ${r.rateLimitedTotal}`,
    ...r.runs.map((x) => `- run ${x.run}: ${x.writes.join(' ')}`),
  ].join('\n');
}
