import type { RateModelName } from '../test/fakes/slack/rate-models.js';
import { type BurstFigure, BURSTS_DEFAULTS, type ReplyTimeline, runModel } from './bursts.js';

// `--bursts-runs N` (issue 31): the repeated-bursts section (bench/bursts.ts) N times per rate
// model, each run a fresh bridge process, fake and emulator, up to and including the first burst
// in which all 4 replies of some channel stream (each has a chat.update accepted): the burst that
// meets a per-channel update limit first. (A fresh bridge streams only 4 replies of 20 in its
// first burst; it streams more as it learns the workspace's room, so that burst is usually the
// 3rd or 4th.) So a slow run that happens 2 times in 7 shows as a count rather than as luck.
// Every run's figures are printed and kept; the writes of every reply of that burst (posts,
// edits, 429s, in ms after its first mention) are kept for runs over the bound or with a 429.

/** Issue 31: the first burst's last final within 10 s of the last upstream end. */
export const FIRST_BURST_BOUND_MS = 10_000;

export interface FirstBurstRun extends BurstFigure {
  run: number;
  /** Whether some channel streamed all its replies in this burst (else: the run's last burst). */
  channelFull: boolean;
  /** The last final after the last upstream end of every burst run, up to this one. */
  allBursts: (number | null)[];
  /** Every reply's writes; kept only for runs over the bound or with a 429. */
  timeline?: ReplyTimeline[];
}

export interface FirstBurstModel {
  model: RateModelName;
  runs: FirstBurstRun[];
  /** Runs whose last final came within FIRST_BURST_BOUND_MS of the last upstream end. */
  withinBound: number;
  rateLimitedTotal: number;
}

export interface FirstBurstResult {
  runsPerModel: number;
  repliesPerBurst: number;
  channels: number;
  replyChars: number;
  boundMs: number;
  models: FirstBurstModel[];
}

export async function runFirstBursts(
  models: readonly RateModelName[],
  runs: number,
  log: (s: string) => void,
): Promise<FirstBurstResult> {
  const out: FirstBurstModel[] = [];
  for (const model of models) {
    const rows: FirstBurstRun[] = [];
    for (let run = 1; run <= runs; run++) {
      let timeline: ReplyTimeline[] | undefined;
      let channelFull = false;
      const r = await runModel(model, () => {}, {
        timeline: (_b, t) => {
          timeline = t;
          channelFull = fullChannel(t);
          return channelFull;
        },
      });
      const f = r.bursts[r.bursts.length - 1];
      if (!f) {
        log(`bench: bursts [${model}] run ${run}: no figure (${r.notes.join('; ')})`);
        continue;
      }
      const slow = f.lastFinalAfterEndMs === null || f.lastFinalAfterEndMs > FIRST_BURST_BOUND_MS;
      const allBursts = r.bursts.map((b) => b.lastFinalAfterEndMs);
      rows.push({
        run,
        channelFull,
        allBursts,
        ...f,
        ...(timeline && (slow || f.rateLimited > 0) ? { timeline } : {}),
      });
      const which = channelFull
        ? `burst ${f.burst} (first with a channel's 4 streaming)`
        : `burst ${f.burst} (no channel streamed 4)`;
      log(
        `bench: bursts [${model}] run ${run}/${runs}: ${which}: ${formatRun(f)}; every burst's last final: ${allBursts.join(', ')} ms${r.notes.length ? ` (${r.notes.join('; ')})` : ''}`,
      );
    }
    out.push({
      model,
      runs: rows,
      withinBound: rows.filter((f) => f.lastFinalAfterEndMs !== null && f.lastFinalAfterEndMs <= FIRST_BURST_BOUND_MS)
        .length,
      rateLimitedTotal: rows.reduce((s, f) => s + f.rateLimited, 0),
    });
  }
  const d = BURSTS_DEFAULTS;
  return {
    runsPerModel: runs,
    repliesPerBurst: d.replies,
    channels: d.channels,
    replyChars: d.long,
    boundMs: FIRST_BURST_BOUND_MS,
    models: out,
  };
}

/** Some channel's replies all streamed: each has an accepted chat.update. */
function fullChannel(replies: readonly ReplyTimeline[]): boolean {
  const per = new Map<number, { all: number; streamed: number }>();
  for (const r of replies) {
    const c = per.get(r.channel) ?? { all: 0, streamed: 0 };
    c.all += 1;
    if (r.writes.some((w) => w.startsWith('update@') && !w.includes(':'))) c.streamed += 1;
    per.set(r.channel, c);
  }
  return [...per.values()].some((c) => c.all > 1 && c.streamed === c.all);
}

function formatRun(f: BurstFigure): string {
  const last = f.lastFinalAfterEndMs === null ? 'not all exact' : `${f.lastFinalAfterEndMs} ms`;
  return `${f.exact}/${f.replies} exact, last final ${last} after the last upstream end, ${f.rateLimited} 429s`;
}

export function formatFirstBursts(r: FirstBurstResult): string {
  const rows = r.models.map((m) => {
    const lasts = m.runs
      .map(
        (f) =>
          `${f.lastFinalAfterEndMs === null ? '–' : String(f.lastFinalAfterEndMs)} (#${f.burst}${f.channelFull ? '' : '*'})`,
      )
      .join(', ');
    const rl = m.runs.map((f) => f.rateLimited).join(', ');
    return `| ${m.model} | ${m.withinBound}/${m.runs.length} | ${lasts} | ${rl} (${m.rateLimitedTotal}) |`;
  });
  return [
    `Repeated bursts, ${r.runsPerModel} runs per model (each a fresh bridge, fake and emulator), each up to the first burst in which some channel's replies all stream: ${r.repliesPerBurst} mentions in ${r.channels} channels per burst, ${r.replyChars}-character replies over about 3 s; bound ${r.boundMs / 1000} s. (#n: that burst; * no channel streamed all, the run's last burst.)`,
    '',
    "| model | within bound | that burst's last final after last end, ms, per run | its 429s per run (all) |",
    '| ----- | ------------ | -------------------------------------- | ------------------ |',
    ...rows,
  ].join('\n');
}
