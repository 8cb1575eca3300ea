import type { DecodingResult } from './decode.js';
import { HOSTILE_TARGETS, type HealthzFigure, type HostileResult } from './hostile.js';

// The figures of a run, and the table printed on stdout (Markdown, so it can be pasted as is).

export interface Pcts {
  p50: number | null;
  p99: number | null;
}

export interface LevelResult {
  platform: 'discord' | 'slack';
  /** Slack: the fake's rate-limit model (test/fakes/slack/rate-models.ts). */
  model?: string;
  level: number;
  channels: number;
  replies: number;
  /** Replies whose final platform text equals the upstream's (Slack: after rendering). */
  exact: number;
  /** Platform's first post minus the upstream's first text chunk. */
  firstTextMs: Pcts;
  /** Last platform write minus the upstream's end, for exact replies. */
  finalTextMs: Pcts;
  /** Successful message posts and edits per reply. */
  writesPerReply: number | null;
  /** 429 answers of the fake during the level. */
  rateLimited: number;
  /** 429s the bridge itself counted (bridge_platform_rate_limited_total). */
  bridgeCounted429: number;
  /** VmRSS once ready, before any message. */
  rssAtReadyMb: number | null;
  /** VmHWM of the bridge process at the end (its peak since start). */
  peakRssMb: number | null;
  cpuSecondsPerReply: number | null;
  /** Exact replies / seconds from the first user message to the last final text. */
  repliesPerSecond: number | null;
  wallSeconds: number | null;
  /** Accepted message writes by method (Slack: the fake's write log). */
  writesByMethod?: Record<string, number>;
  /** The most 429s any one bucket gave. */
  rateLimitedMaxPerBucket?: number;
  /** floorMs minus the last upstream end: the best client without updates (Slack only). */
  floorAfterEndMs?: number | null;
  /** The last reply's final write minus the last upstream end, when every reply ended exact. */
  lastFinalAfterEndMs?: number | null;
  notes: string[];
}

/** A bridge at rest, then lone replies one after another. */
export interface LoneResult {
  variant: 'slack-edit' | 'slack-native' | 'discord';
  replies: number;
  exact: number;
  /** VmRSS a second after ready, before any message. */
  idleRssMb: number | null;
  /** Last platform write minus the upstream's end. */
  finalTextMs: Pcts;
  /** An agent's step (`[steps]`): the first accepted write after the upstream sent the step event, minus that time. */
  stepShownMs?: Pcts;
  notes: string[];
}

export interface NaiveResult {
  platform: 'discord';
  level: number;
  replies: number;
  exact: number;
  firstTextMs: Pcts;
  finalTextMs: Pcts;
  writesPerReply: number | null;
  /** Writes tried, including the ones refused with 429. */
  attemptsPerReply: number | null;
  rateLimited: number;
  wallSeconds: number | null;
}

export const TARGETS = {
  exact: '100%',
  firstText: 'p50 ≤ 20 ms, p99 ≤ 100 ms',
  finalText: 'p50 ≤ 50 ms (where the bucket allows)',
  rateLimited: '0 at 50 concurrent',
  rss: '≤ 150 MB at 200',
  idleRss: '≤ 100 MB idle',
  loneFinal: 'lone reply final text p50 ≤ 50 ms after the upstream end',
  throughput: '≥ 20 replies/s',
};

const f = (x: number | null | undefined, unit = '') => (x === null || x === undefined ? '–' : `${x}${unit}`);
const p = (x: Pcts) => `${f(x.p50)} / ${f(x.p99)}`;

export function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

export function formatTable(doc: {
  date: string;
  machine: { cpu: string; cores: number; node: string };
  workload: { replyChars: number; chunks: number; chunkDelayMs: number; repliesPerChannel: number };
  results: LevelResult[];
  naive: NaiveResult[];
  decoding?: DecodingResult | undefined;
  hostile?: HostileResult | undefined;
  lone?: LoneResult[];
}): string {
  const w = doc.workload;
  const out: string[] = [];
  out.push(
    `Bridge benchmark, ${doc.date.slice(0, 10)}: ${doc.machine.cpu}, ${doc.machine.cores} cores, Node ${doc.machine.node}.`,
    `Each reply: ${w.replyChars} chars streamed in ${w.chunks} chunks ${w.chunkDelayMs} ms apart; up to ${w.repliesPerChannel} concurrent replies per channel.`,
    '',
  );
  const methods = (r: LevelResult) =>
    Object.entries(r.writesByMethod ?? {})
      .map(([m, n]) => `${m.replace(/^chat\./, '')} ${n}`)
      .join(', ') || '–';
  const rl = (r: LevelResult) =>
    `${r.bridgeCounted429 === r.rateLimited ? String(r.rateLimited) : `${r.rateLimited} (metric ${r.bridgeCounted429})`}${
      r.rateLimited > 0 && r.rateLimitedMaxPerBucket !== undefined ? ` (≤ ${r.rateLimitedMaxPerBucket}/bucket)` : ''
    }`;
  const slack = doc.results.filter((r) => r.platform === 'slack');
  const others = doc.results.filter((r) => r.platform !== 'slack');
  if (slack.length > 0) {
    out.push(
      'Slack, per rate-limit model of the fake (edit mode). "last final / floor" are ms after the last upstream end: when the last reply was final, and the floor (floorMs: the earliest any client could have every reply final under that model, posting each reply once when it ends).',
      '',
      table(
        [
          'model',
          'replies',
          'exact',
          'first text p50/p99 ms',
          'final text p50/p99 ms',
          'last final / floor ms',
          'writes (accepted)',
          '429s',
          'peak RSS MB',
        ],
        slack.map((r) => [
          r.model ?? 'default',
          String(r.level),
          `${r.exact}/${r.replies}`,
          p(r.firstTextMs),
          p(r.finalTextMs),
          `${f(r.lastFinalAfterEndMs)} / ${f(r.floorAfterEndMs)}`,
          methods(r),
          rl(r),
          f(r.peakRssMb),
        ]),
      ),
      '',
    );
  }
  if (others.length > 0) {
    out.push(
      table(
        [
          'platform',
          'replies',
          'exact',
          'first text p50/p99 ms',
          'final text p50/p99 ms',
          'writes/reply',
          '429s (fake)',
          'peak RSS MB',
          'CPU s/reply',
          'replies/s',
        ],
        others.map((r) => [
          r.platform,
          String(r.level),
          `${r.exact}/${r.replies}`,
          p(r.firstTextMs),
          p(r.finalTextMs),
          f(r.writesPerReply),
          rl(r),
          f(r.peakRssMb),
          f(r.cpuSecondsPerReply),
          f(r.repliesPerSecond),
        ]),
      ),
    );
  }
  if (doc.lone && doc.lone.length > 0) {
    const at200 = (variant: LoneResult['variant']) => {
      const rs = doc.results.filter(
        (r) => r.level === 200 && (variant === 'discord' ? r.platform === 'discord' : r.platform === 'slack'),
      );
      if (variant === 'slack-native' || rs.length === 0) return '–';
      return rs.map((r) => `${f(r.peakRssMb)}${r.model ? ` (${r.model})` : ''}`).join(', ');
    };
    out.push(
      '',
      `Memory and the lone reply (targets: ${TARGETS.idleRss}, ${TARGETS.rss}; ${TARGETS.loneFinal}):`,
      '',
      table(
        [
          'bridge',
          'idle RSS MB',
          'peak RSS MB at 200',
          'lone replies exact',
          'lone final text p50/p99 ms',
          'step shown p50/p99 ms',
        ],
        doc.lone.map((l) => [
          l.variant,
          f(l.idleRssMb),
          at200(l.variant),
          `${l.exact}/${l.replies}`,
          p(l.finalTextMs),
          l.stepShownMs ? p(l.stepShownMs) : '–',
        ]),
      ),
    );
  }
  out.push(
    '',
    `Targets (not asserted): exact ${TARGETS.exact}; first text ${TARGETS.firstText}; final text ${TARGETS.finalText}; 429s ${TARGETS.rateLimited}; RSS ${TARGETS.rss}; throughput ${TARGETS.throughput}.`,
  );
  if (doc.naive.length > 0) {
    out.push(
      '',
      'Naive baseline (Discord: post, then edit on every chunk, no scheduler; a 429 drops that edit, the last write is retried):',
      '',
      table(
        ['replies', 'exact', 'first text p50/p99 ms', 'final text p50/p99 ms', 'writes/reply', 'tried/reply', '429s'],
        doc.naive.map((n) => [
          String(n.level),
          `${n.exact}/${n.replies}`,
          p(n.firstTextMs),
          p(n.finalTextMs),
          f(n.writesPerReply),
          f(n.attemptsPerReply),
          String(n.rateLimited),
        ]),
      ),
    );
    const ratio = doc.naive
      .map((n) => {
        const b = doc.results.find((r) => r.platform === 'discord' && r.level === n.level);
        if (!b?.writesPerReply || !n.attemptsPerReply) return undefined;
        return `${n.level}: ${round1(n.attemptsPerReply / b.writesPerReply)}× the writes, 429s ${n.rateLimited} vs ${b.rateLimited}`;
      })
      .filter((s): s is string => s !== undefined);
    if (ratio.length > 0) out.push('', `Naive vs bridge on Discord (writes tried per reply) at ${ratio.join('; ')}.`);
  }
  if (doc.decoding) out.push('', formatDecoding(doc.decoding));
  if (doc.hostile) out.push('', formatHostile(doc.hostile));
  const notes = [
    ...doc.results.flatMap((r) =>
      r.notes.map((n) => `- ${r.platform}${r.model ? ` [${r.model}]` : ''} ${r.level}: ${n}`),
    ),
    ...(doc.lone ?? []).flatMap((l) => l.notes.map((n) => `- ${l.variant}: ${n}`)),
  ];
  if (notes.length > 0) out.push('', 'Notes:', ...notes);
  // Sections left out (no levels with --decode-only or --hostile-only) leave no double gaps.
  return out.join('\n').replace(/\n{3,}/g, '\n\n');
}

/** The decoding section: time per MB of each upstream stream format, and the 20,000-chunk case. */
export function formatDecoding(d: DecodingResult): string {
  const j = d.json20k;
  return [
    'Decoding (upstream stream decoders in process; JSON.parse calls and characters looked at, counted):',
    '',
    table(
      ['format', 'MB', 'chunk bytes', 'ms/MB', 'parses', 'chars scanned'],
      d.formats.map((x) => [
        x.format,
        String(round1(x.bytes / 2 ** 20)),
        String(Math.round(x.bytes / x.chunks)),
        String(x.msPerMb),
        String(x.parses),
        String(x.scanned),
      ]),
    ),
    '',
    `${j.chunks} application/json chunks (one pretty-printed document, a line closing with } a chunk): ${j.ms} ms, ${j.parses} parse(s) (target < ${d.json20kTargetMs} ms${j.ms < d.json20kTargetMs ? ', met' : ', MISSED'}).`,
  ].join('\n');
}

/** The hostile-input section: one row a figure, with its target and whether it was met. */
export function formatHostile(h: HostileResult): string {
  const rows: string[][] = [];
  const met = (ok: boolean | null) => (ok === null ? '–' : ok ? 'yes' : 'NO');
  const hz = (what: string, z: HealthzFigure) => {
    const max = z.maxMs;
    rows.push([
      `/healthz max / p99 ms, ${what} (${z.samples} polls${z.errors !== 0 ? `, ${z.errors} failed` : ''})`,
      `${f(max)} / ${f(z.p99Ms)}`,
      `< ${HOSTILE_TARGETS.healthzMs}`,
      met(max === null ? null : max < HOSTILE_TARGETS.healthzMs && z.errors === 0),
    ]);
  };
  for (const x of h.flood) {
    const st = Object.entries(x.statuses)
      .map(([k, v]) => `${v}× ${k === 'none' ? 'closed, no answer read' : k}`)
      .join(', ');
    rows.push([
      `RSS growth MB, ${x.parallel} × ${x.bodyMb} MB unsigned /slack/events (${x.framing}; answers ${st}; ≤ ${f(x.maxSentBeforeAnswerMb)} MB sent each)`,
      `+${f(x.growthMb)} (${f(x.idleRssMb)} → ${f(x.peakRssMb)})`,
      `< +${HOSTILE_TARGETS.floodRssGrowthMb}`,
      met(x.growthMb === null ? null : x.growthMb < HOSTILE_TARGETS.floodRssGrowthMb),
    ]);
    hz(`during the ${x.framing} flood`, x.healthz);
  }
  if (h.json20k)
    hz(
      `while the upstream streams ${h.json20k.chunks} application/json chunks (${f(h.json20k.upstreamMs)} ms)`,
      h.json20k.healthz,
    );
  const c = h.crowd;
  if (c) {
    const answered = c.replied + c.busy + c.error;
    rows.push(
      [
        `${c.users} users at once (MAX_CONCURRENT_REPLIES=${c.maxConcurrentReplies}, MAX_QUEUED_REPLIES=${c.maxQueuedReplies}): reply / busy notice / error / nothing at 10 s`,
        `${c.replied} / ${c.busy} / ${c.error} / ${c.nothing}`,
        'nothing = 0',
        met(c.nothing === 0 && answered === c.users),
      ],
      [
        'time to first visible text p50 / p99 ms',
        `${f(c.firstVisibleMs.p50)} / ${f(c.firstVisibleMs.p99)}`,
        '< 10000',
        met(c.firstVisibleMs.p99 === null ? null : c.firstVisibleMs.p99 < 10_000),
      ],
      [
        'bridge_replies_in_flight peak',
        f(c.inFlightPeak),
        `≤ ${c.maxConcurrentReplies}`,
        met(c.inFlightPeak === null ? null : c.inFlightPeak <= c.maxConcurrentReplies),
      ],
      [
        `slots held by replies whose upstream had ended (peak; ${c.upstreamStreams} upstream streams)`,
        f(c.heldAfterUpstreamEndPeak),
        '–',
        '–',
      ],
      [
        'bridge_replies_in_flight back at 0: ms after the last upstream stream ended',
        `${f(c.msToZeroInFlight)} (${f(c.inFlightAtEnd)} at the end)`,
        'reaches 0',
        met(c.msToZeroInFlight !== null),
      ],
      [
        'bridge_queue_depth peak',
        f(c.queueDepthPeak),
        `≤ ${c.maxQueuedReplies}`,
        met(c.queueDepthPeak === null ? null : c.queueDepthPeak <= c.maxQueuedReplies),
      ],
      ['replies exact once all ended', `${c.exactAtEnd}/${c.users}`, '–', '–'],
      ['Discord writes (all routes), last one after', `${c.platformWrites}, ${f(c.lastPlatformWriteS)} s`, '–', '–'],
    );
  }
  const out = [
    'Hostile input (issue 12; figures, not asserted):',
    '',
    table(['figure', 'value', 'target', 'met?'], rows),
  ];
  if (h.notes.length > 0) out.push('', ...h.notes.map((n) => `- ${n}`));
  return out.join('\n');
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}
