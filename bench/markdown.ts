import { startEmulator } from '../src/emulator/index.js';
import { startFakeSlack } from '../test/fakes/slack/index.js';
import { BENCH_API_KEY, type BridgeProcess, metricSum, startBridge, upstreamEnv } from './bridge-process.js';
import { type HealthzFigure, pollHealthz } from './hostile.js';
import { round } from './text.js';

// The pathological-Markdown section (issue 19): the real bridge (child process, Bolt over HTTP)
// answers four Slack mentions at once whose echoed replies are 39,000 characters of `*a` (an
// emphasis run the Markdown parser is quadratic on), then, in a fresh bridge, four replies of
// plain words of the same length. Figures: the bridge's CPU seconds for each run, their ratio, and
// /healthz worst latency meanwhile. Every wait has a deadline; a figure that misses is reported.

const API_KEY = BENCH_API_KEY;
const BOT = 'demo-bot';

export const MARKDOWN_TARGETS = { cpuRatio: 2, healthzMs: 200 };

export interface MarkdownRun {
  kind: 'star-a' | 'plain';
  replies: number;
  replyChars: number;
  /** Bridge CPU (user + system) from the first mention to the last reply's end, in seconds. */
  cpuSeconds: number | null;
  wallSeconds: number | null;
  /** Replies whose Slack messages, joined, hold the whole reply (checked by length of what shows). */
  finished: number;
  healthz: HealthzFigure;
  /** /healthz for as long, in the same bridge before the mentions: the machine's own noise. */
  idleHealthz: HealthzFigure;
}

export interface MarkdownResult {
  runs: MarkdownRun[];
  /** star-a CPU / plain CPU. */
  cpuRatio: number | null;
  notes: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** A message whose echo ("You said: " + it) is `chars` long, streamed in 60 chunks. */
function message(kind: MarkdownRun['kind'], chars: number): string {
  const directives = '[chunks 60] [delay 20] ';
  const body = chars - 'You said: '.length - directives.length;
  const unit = kind === 'star-a' ? '*a' : 'word ';
  return directives + unit.repeat(Math.ceil(body / unit.length)).slice(0, body);
}

async function oneRun(
  kind: MarkdownRun['kind'],
  o: { replies: number; replyChars: number; maxSeconds: number; idleSeconds: number },
  notes: string[],
): Promise<MarkdownRun> {
  // The echo is the reply: the emulator must take a message as long as it.
  const emulator = await startEmulator({
    port: 0,
    apiKey: API_KEY,
    bots: [BOT],
    maxRecordedRequests: 100,
    maxMessageChars: 100_000,
  });
  const slack = await startFakeSlack();
  let bridge: BridgeProcess | undefined;
  try {
    bridge = await startBridge({
      ...upstreamEnv(emulator.url, BOT),
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: slack.signingSecret,
      SLACK_API_URL: slack.apiUrl,
    });
    await sleep(500);
    const b = bridge;
    const idle = pollHealthz(b.port);
    await sleep(o.idleSeconds * 1000);
    const idleHealthz = await idle.stop();
    const poller = pollHealthz(b.port);
    const cpu0 = b.cpuSeconds();
    const t0 = Date.now();
    let ended = 0;
    let threads: string[] = [];
    const shownChars = (i: number) =>
      slack
        .botMessages(`C0MD${i}`, threads[i])
        .map((x) => x.text)
        .join('').length;
    // Edit-mode Slack text is escaped mrkdwn: at least the reply's length shows when it is all there.
    const complete = (i: number) => shownChars(i) >= o.replyChars - 100;
    let healthz: HealthzFigure = { samples: 0, errors: 0, maxMs: null, p99Ms: null };
    let cpu = Number.NaN;
    let wall = 0;
    try {
      const text = message(kind, o.replyChars);
      threads = await Promise.all(
        Array.from({ length: o.replies }, async (_, i) => {
          // A channel each: the platform's per-channel budget is the same for both kinds.
          const post = slack.userPost({ channel: `C0MD${i}`, user: `U0MD${i}`, text: `<@${slack.botUserId}> ${text}` });
          const res = await slack.postSignedEvent(
            `http://127.0.0.1:${b.port}/slack/events`,
            slack.envelope(post.mention ?? {}),
          );
          if (res.status !== 200) notes.push(`${kind}: signed event ${i} answered ${res.status}`);
          return post.ts;
        }),
      );
      const deadline = Date.now() + o.maxSeconds * 1000;
      for (;;) {
        const m = await b.metrics().catch(() => '');
        ended = ['finished', 'failed', 'interrupted'].reduce(
          (s, k) => s + metricSum(m, `bridge_replies_${k}_total`, { platform: 'slack' }),
          0,
        );
        if (ended >= o.replies && threads.every((_, i) => complete(i))) break;
        if (Date.now() > deadline) {
          notes.push(`${kind}: stopped after ${o.maxSeconds} s with ${ended} of ${o.replies} replies ended`);
          break;
        }
        await sleep(100);
      }
    } finally {
      healthz = await poller.stop();
      cpu = b.cpuSeconds() - cpu0;
      wall = (Date.now() - t0) / 1000;
    }
    let finished = 0;
    for (let i = 0; i < o.replies; i++) {
      if (complete(i)) finished++;
      else notes.push(`${kind}: reply ${i} shows ${shownChars(i)} chars`);
    }
    if (finished < o.replies && b.logTail.length > 0)
      notes.push(`${kind}: log tail ${b.logTail.slice(-2).join(' | ').slice(0, 400)}`);
    return {
      kind,
      replies: o.replies,
      replyChars: o.replyChars,
      cpuSeconds: round(Number.isFinite(cpu) ? cpu : null, 2),
      wallSeconds: round(wall, 1),
      finished,
      healthz,
      idleHealthz,
    };
  } finally {
    await bridge?.stop().catch(() => null);
    await slack.close().catch(() => {});
    await emulator.close().catch(() => {});
  }
}

export async function runMarkdown(
  o: { replies?: number; replyChars?: number; maxSeconds?: number; idleSeconds?: number },
  log: (s: string) => void,
): Promise<MarkdownResult> {
  const opts = {
    replies: o.replies ?? 4,
    replyChars: o.replyChars ?? 39_000,
    maxSeconds: o.maxSeconds ?? 120,
    idleSeconds: o.idleSeconds ?? 5,
  };
  const out: MarkdownResult = { runs: [], cpuRatio: null, notes: [] };
  for (const kind of ['star-a', 'plain'] as const) {
    log(`bench: markdown: ${opts.replies} replies of ${opts.replyChars} chars of ${kind} ...`);
    try {
      const r = await oneRun(kind, opts, out.notes);
      out.runs.push(r);
      log(
        `bench: markdown: ${kind}: CPU ${r.cpuSeconds} s, wall ${r.wallSeconds} s, /healthz max ${r.healthz.maxMs} ms`,
      );
    } catch (err) {
      out.notes.push(`${kind} failed: ${errText(err)}`);
    }
  }
  const [star, plain] = [out.runs.find((r) => r.kind === 'star-a'), out.runs.find((r) => r.kind === 'plain')];
  if (star?.cpuSeconds != null && plain?.cpuSeconds != null && plain.cpuSeconds > 0)
    out.cpuRatio = round(star.cpuSeconds / plain.cpuSeconds, 2);
  return out;
}

/** The section's lines for the report. */
export function formatMarkdown(r: MarkdownResult): string {
  const lines = ['Pathological Markdown (Slack edit mode, real bridge + fake Slack)', ''];
  lines.push(
    '| replies | CPU s | wall s | finished | /healthz max ms | /healthz p99 ms | idle /healthz max ms |',
    '|---|---|---|---|---|---|---|',
  );
  for (const x of r.runs)
    lines.push(
      `| ${x.replies} × ${x.replyChars} chars of ${x.kind} | ${x.cpuSeconds} | ${x.wallSeconds} | ${x.finished}/${x.replies} | ${x.healthz.maxMs} | ${x.healthz.p99Ms} | ${x.idleHealthz.maxMs} |`,
    );
  lines.push(
    '',
    `CPU star-a / plain: ${r.cpuRatio ?? 'n/a'} (target ≤ ${MARKDOWN_TARGETS.cpuRatio}); /healthz target < ${MARKDOWN_TARGETS.healthzMs} ms`,
  );
  for (const n of r.notes) lines.push(`note: ${n}`);
  return lines.join('\n');
}
