import { startEmulator } from '../src/emulator/index.js';
import { MESSAGES } from '../src/core/user-messages.js';
import { type FakeSlack, startFakeSlack } from '../test/fakes/slack/index.js';
import { startTimingProxy } from '../test/fakes/timing-proxy.js';
import { BENCH_API_KEY, startBridge, upstreamEnv } from './bridge-process.js';
import { round } from './text.js';

// Fair turns (issue 19): one user floods a Slack channel with 60 mentions (each opens a thread
// of its own: 60 places competing for the channel's posts, about one a second), then another
// user mentions the bot once there. Measured: the other user's first-text latency (its mention to
// its first post the fake accepted) and how many of the channel's posts went first; what the
// flooder was told (ephemerals, public notices). Two runs: USER_MESSAGES_PER_MINUTE at its
// default (20 of the flood answered, 40 refused) and raised so all 60 are in flight. The real
// bridge as a child process; bounded: each run ends when the other user's reply shows.

export interface FloodRun {
  userMessagesPerMinute: number;
  /** Flood messages the bridge took upstream. */
  floodAnswered: number;
  /** The other user's mention → its first post accepted by the fake (ms); null if none in time. */
  otherFirstTextMs: number | null;
  /** The channel's posts accepted between the other user's mention and its first post. */
  postsBefore: number | null;
  /** The flood's posts still to come when the other user's reply showed (what it did not wait for). */
  floodPostsAfter: number;
  /** Ephemeral refusals the flooder had when the other user’s reply showed (more trickle after). */
  ephemerals: number;
  publicNotices: number;
  rateLimited: number;
  notes: string[];
}

export interface FloodResult {
  flood: number;
  model: string;
  runs: FloodRun[];
}

const API_KEY = BENCH_API_KEY;
const FLOOD = 60;
const CHANNEL = 'C0FLOOD';
/** The reply comes at once: the flood's posts all wait for the channel's budget together. */
const REPLY = '[long 300]';
const RUN_LIMIT_MS = 90_000;

const REFUSALS = new Set([MESSAGES.slowDown, MESSAGES.overloaded, MESSAGES.queueFull]);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function mention(fake: FakeSlack, user: string, text: string): Promise<string> {
  const posted = fake.userPost({ channel: CHANNEL, user, text: `<@${fake.botUserId}> ${text}` });
  // Slack delivers a mention in a channel twice (app_mention and message.channels).
  await Promise.all([posted.mention ? fake.sendEvent(posted.mention) : undefined, fake.sendEvent(posted.message)]);
  return posted.ts;
}

async function runOnce(userMessagesPerMinute: number, model: 'fixed-window'): Promise<FloodRun> {
  const emulator = await startEmulator({ port: 0, apiKey: API_KEY, bots: ['demo-bot'], maxRecordedRequests: 1000 });
  const proxy = await startTimingProxy(emulator.url);
  const fake = await startFakeSlack({ rateModel: model });
  const notes: string[] = [];
  let bridge: Awaited<ReturnType<typeof startBridge>> | undefined;
  try {
    bridge = await startBridge({
      ...upstreamEnv(proxy.url),
      SLACK_BOT_TOKEN: fake.botToken,
      SLACK_APP_TOKEN: fake.appToken,
      SLACK_API_URL: fake.apiUrl,
      SLACK_STREAMING: 'edit',
      USER_MESSAGES_PER_MINUTE: String(userMessagesPerMinute),
      MAX_CONCURRENT_REPLIES: '64',
    });
    const t0 = Date.now();
    await Promise.all(Array.from({ length: FLOOD }, (_, i) => mention(fake, 'U0FLOOD', `flood bench-f${i} ${REPLY}`)));
    const taken = Math.min(FLOOD, userMessagesPerMinute);
    // The flood is in flight: its upstream replies are done, its posts owed to the channel.
    await proxy.waitEnded(taken, 30_000).catch(() => notes.push('the flood’s upstream calls did not all end in 30 s'));
    const posts = () =>
      fake.writeLog.filter((w) => w.accepted && w.method === 'chat.postMessage' && w.channel === CHANNEL);
    const before = posts().length;
    const askedAt = Date.now();
    const otherTs = await mention(fake, 'U0OTHER', `my turn bench-other ${REPLY}`);
    let firstAt: number | undefined;
    let index = -1;
    while (Date.now() - t0 < RUN_LIMIT_MS) {
      const all = posts();
      index = all.findIndex((w) => w.threadTs === otherTs);
      if (index >= 0) {
        firstAt = all[index]?.at;
        break;
      }
      await sleep(20);
    }
    if (firstAt === undefined) notes.push(`no post for the other user within ${RUN_LIMIT_MS / 1000} s`);
    const floodPosted = posts().filter((w) => w.threadTs !== otherTs).length;
    return {
      userMessagesPerMinute,
      floodAnswered: proxy.timings.size - (proxy.timings.has('other') ? 1 : 0),
      otherFirstTextMs: firstAt === undefined ? null : round(firstAt - askedAt, 0),
      postsBefore: index < 0 ? null : index - before,
      floodPostsAfter: Math.max(0, taken - floodPosted),
      ephemerals: fake.ephemerals.filter((e) => e.user === 'U0FLOOD').length,
      publicNotices: [...fake.messages(CHANNEL).values()].filter((t) => REFUSALS.has(t)).length,
      rateLimited: fake.rateLimitHits,
      notes,
    };
  } finally {
    await bridge?.stop().catch(() => null);
    await fake.close().catch(() => {});
    await proxy.close().catch(() => {});
    await emulator.close().catch(() => {});
  }
}

export async function runFlood(log: (s: string) => void): Promise<FloodResult> {
  const runs: FloodRun[] = [];
  for (const limit of [20, 100]) {
    log(`bench: flood of ${FLOOD} mentions, USER_MESSAGES_PER_MINUTE=${limit} ...`);
    const r = await runOnce(limit, 'fixed-window');
    log(`bench: flood: ${formatFloodRun(r)}`);
    runs.push(r);
  }
  return { flood: FLOOD, model: 'fixed-window', runs };
}

function formatFloodRun(r: FloodRun): string {
  const latency = r.otherFirstTextMs === null ? 'none' : `${r.otherFirstTextMs} ms`;
  return `${r.floodAnswered} of the flood taken; the other user's first text after ${latency} (${r.postsBefore ?? '–'} channel posts first, ${r.floodPostsAfter} of the flood's still owed); ${r.ephemerals} ephemeral refusals so far, ${r.publicNotices} public notices, ${r.rateLimited} 429s`;
}

export function formatFlood(f: FloodResult): string {
  return [
    `Flood (Slack, ${f.model}, one channel): one user sends ${f.flood} mentions, then another user one.`,
    ...f.runs.map((r) => `- USER_MESSAGES_PER_MINUTE=${r.userMessagesPerMinute}: ${formatFloodRun(r)}`),
  ].join('\n');
}
