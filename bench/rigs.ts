import { renderMarkdownText, renderMrkdwn } from '../src/connectors/slack/render.js';
import { type FakeDiscord, startFakeDiscord } from '../test/fakes/discord/index.js';
import { type FakeSlack, type RateModelName, startFakeSlack } from '../test/fakes/slack/index.js';
import { floorMs } from '../test/fakes/slack/rate-models.js';
import { joinSplit, squash } from './text.js';
import type { FaultSource } from '../test/fakes/chaos.js';

// One platform's side of a run: the fake with its rate limits on, users writing to the bot,
// and what the platform shows for each reply (its message texts and the writes that made them).

export type Platform = 'discord' | 'slack';

export interface Write {
  at: number;
  status: number;
  /** The call: Slack's Web API method, Discord's HTTP method. */
  kind: string;
}

export interface ReplyHandle {
  tag: string;
  sentAt: number;
}

export interface PlatformRig {
  platform: Platform;
  /** Environment for the bridge process. */
  env: Record<string, string>;
  /** A user sends a message mentioning the bot. */
  send(i: number, tag: string, text: string): Promise<ReplyHandle>;
  /** Whether the reply as shown equals the upstream's text (after the platform's rendering). */
  exact(h: ReplyHandle, expected: string): boolean;
  /** Characters the reply shows now, and how many it should show (after rendering). */
  shownChars(h: ReplyHandle, expected: string): { shown: number; full: number };
  /** Successful and refused message writes (posts and edits) for this reply, in order. */
  writes(h: ReplyHandle): Write[];
  /** The bot's messages this reply shows (more than its parts: a duplicate). */
  messages(h: ReplyHandle): number;
  /** 429 answers of the fake, all methods. */
  rateLimitHits(): number;
  /** 429 answers by the bucket that refused. */
  rateLimitHitsByBucket(): Record<string, number>;
  /** Accepted message writes by method (Slack: the fake's write log; Discord: POST/PATCH). */
  writesByMethod(): Record<string, number>;
  /** The rate-limit model the fake enforces (Slack), for the results. */
  rateModel: string | undefined;
  /**
   * The earliest time every reply could be final under the fake's model (floorMs), given when
   * each reply's upstream ended; undefined where there is no such floor (Discord).
   */
  floor(ends: readonly { h: ReplyHandle; endAt: number }[], start: number): number | undefined;
  close(): Promise<void>;
}

export interface RigOptions {
  /** Number of channels the users write in. */
  channels: number;
  /** Slack: the fake's rate-limit model (default: the fake's default). */
  rateModel?: RateModelName;
  /** Slack: SLACK_STREAMING for the bridge (default edit). */
  streaming?: 'edit' | 'native';
  /** The fake's lost answers (and refused rich writes where it knows how): test/fakes/chaos.ts. */
  faults?: FaultSource;
}

interface DiscordHandle extends ReplyHandle {
  /** Thread mode: the thread the bridge opens from the user's message has that message's id. */
  threadId: string;
}

export async function discordRig(opts: RigOptions): Promise<PlatformRig> {
  const fake: FakeDiscord = await startFakeDiscord(opts.faults ? { chaos: opts.faults } : {});
  const guild = fake.addGuild('bench');
  const channels = Array.from({ length: Math.max(1, opts.channels) }, (_, i) => fake.addChannel(guild, `bench-${i}`));
  const isMessageWrite = (path: string) => /^\/channels\/\d+\/messages(\/\d+)?$/.test(path);
  return {
    platform: 'discord',
    env: { DISCORD_BOT_TOKEN: fake.token, DISCORD_API_URL: fake.apiUrl },
    async send(i, tag, text) {
      const channelId = channels[i % channels.length] ?? '';
      const user = fake.state.nextId();
      const sentAt = Date.now();
      const json = fake.dispatchMessage({
        channelId,
        authorId: user,
        content: `<@${fake.botUser.id}> bench-${tag} ${text}`,
        mentionsBot: true,
      });
      const h: DiscordHandle = { tag, sentAt, threadId: String(json.id) };
      return h;
    },
    exact(h, expected) {
      const parts = fake.botMessages((h as DiscordHandle).threadId).map((m) => m.content);
      return parts.length > 0 && joinSplit(parts, expected) === expected;
    },
    messages: (h) => fake.botMessages((h as DiscordHandle).threadId).length,
    shownChars(h, expected) {
      const parts = fake.botMessages((h as DiscordHandle).threadId).map((m) => m.content);
      return { shown: joinSplit(parts, expected).length, full: expected.length };
    },
    writes(h) {
      const thread = (h as DiscordHandle).threadId;
      return fake.record
        .filter(
          (r) => r.channelId === thread && (r.method === 'POST' || r.method === 'PATCH') && isMessageWrite(r.path),
        )
        .map((r) => ({ at: r.at, status: r.status, kind: r.method }));
    },
    rateLimitHits: () => fake.rateLimitHits,
    rateLimitHitsByBucket: () => ({}),
    writesByMethod() {
      const out: Record<string, number> = {};
      for (const r of fake.record) {
        if (r.status < 200 || r.status >= 300 || !isMessageWrite(r.path)) continue;
        if (r.method !== 'POST' && r.method !== 'PATCH') continue;
        const k = `${r.method} messages`;
        out[k] = (out[k] ?? 0) + 1;
      }
      return out;
    },
    rateModel: undefined,
    floor: () => undefined,
    close: () => fake.close(),
  };
}

interface SlackHandle extends ReplyHandle {
  channel: string;
  threadTs: string;
}

export async function slackRig(opts: RigOptions): Promise<PlatformRig> {
  const fake: FakeSlack = await startFakeSlack({
    ...(opts.rateModel ? { rateModel: opts.rateModel } : {}),
    ...(opts.faults ? { chaos: opts.faults } : {}),
  });
  const streaming = opts.streaming ?? 'edit';
  // Edit mode writes mrkdwn `text`; native streams write `markdown_text`.
  const render = streaming === 'native' ? renderMarkdownText : renderMrkdwn;
  const channels = Array.from({ length: Math.max(1, opts.channels) }, (_, i) => `C0BENCH${String(i).padStart(4, '0')}`);
  const botParts = (h: SlackHandle) => fake.botMessages(h.channel, h.threadTs);
  return {
    platform: 'slack',
    env: {
      SLACK_BOT_TOKEN: fake.botToken,
      SLACK_APP_TOKEN: fake.appToken,
      SLACK_API_URL: fake.apiUrl,
      SLACK_STREAMING: streaming,
    },
    async send(i, tag, text) {
      const channel = channels[i % channels.length] ?? '';
      const user = `U0BENCH${String(i).padStart(5, '0')}`;
      const sentAt = Date.now();
      const posted = fake.userPost({ channel, user, text: `<@${fake.botUserId}> bench-${tag} ${text}` });
      // Slack delivers a mention in a channel twice (app_mention and message.channels).
      const acks: Promise<unknown>[] = [];
      if (posted.mention) acks.push(fake.sendEvent(posted.mention));
      acks.push(fake.sendEvent(posted.message));
      await Promise.all(acks);
      const h: SlackHandle = { tag, sentAt, channel, threadTs: posted.ts };
      return h;
    },
    exact(h, expected) {
      const parts = botParts(h as SlackHandle).map((m) => m.text);
      if (parts.length === 0) return false;
      if (parts.length === 1) return parts[0] === render(expected);
      // Split replies are rendered part by part; compare without whitespace and fence lines.
      const norm = (s: string) => squash(s).replace(/```[a-z]*/g, '');
      return norm(parts.join('')) === norm(render(expected));
    },
    messages: (h) => botParts(h as SlackHandle).length,
    shownChars(h, expected) {
      return {
        shown: botParts(h as SlackHandle).reduce((n, m) => n + m.text.length, 0),
        full: render(expected).length,
      };
    },
    writes(h) {
      const sh = h as SlackHandle;
      const own = new Set(botParts(sh).map((m) => m.ts));
      return fake.calls
        .filter(
          (c) =>
            c.args.channel === sh.channel &&
            ((c.method === 'chat.postMessage' && c.args.thread_ts === sh.threadTs) ||
              (c.method === 'chat.update' && own.has(String(c.args.ts))) ||
              (c.method.endsWith('Stream') && (c.args.thread_ts === sh.threadTs || own.has(String(c.args.ts))))),
        )
        .map((c) => ({
          at: c.at,
          status: c.result === 'ratelimited' ? 429 : c.result === 'ok' ? 200 : 400,
          kind: c.method,
        }));
    },
    rateLimitHits: () => fake.rateLimitHits,
    rateLimitHitsByBucket: () => ({ ...fake.rateLimitHitsByBucket }),
    writesByMethod() {
      const out: Record<string, number> = {};
      for (const w of fake.writeLog) if (w.accepted) out[w.method] = (out[w.method] ?? 0) + 1;
      return out;
    },
    rateModel: fake.rateModel.name,
    floor(ends, start) {
      const replies = ends.map(({ h, endAt }) => ({
        channel: (h as SlackHandle).channel,
        endAt,
        posts: Math.max(1, botParts(h as SlackHandle).length),
      }));
      return floorMs(fake.rateModel, replies, start);
    },
    async close() {
      await fake.close();
    },
  };
}
