import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiscordConnector, type DiscordConnector } from '../../src/connectors/discord/index.js';
import { createSlackConnector, type SlackConnector } from '../../src/connectors/slack/connector.js';
import { PlatformRateLimitedError } from '../../src/core/ports.js';
import { longMarkdown } from '../../src/emulator/replies.js';
import { silentLogger } from '../../src/logger.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { assertNoPings } from '../fakes/discord/writes.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { partsProblems } from '../integration/discord/parts.js';
import { type CoreHarness, startCore, waitFor } from './harness.js';
import { discord429, type ApiProxy, startProxy } from './proxy.js';

// Platform 429 storms: the platform answers 429 to reply writes for a while. Replies must still
// end exact (every character of the upstream reply shown once, in order, split right), with no
// write after a message's final one and nothing lost or doubled.

describe('test connector: 429 storms', () => {
  let h: CoreHarness;
  afterAll(async () => {
    await h?.close();
  });

  it('every write of a channel refused for 1.5 s, while three replies stream there: all three exact', async () => {
    h = await startCore({
      // Every message ends with a final write, as on every real sink: without the need, an
      // unchanged final is skipped when an edit showed the whole text before the upstream's end
      // arrived, which a loaded machine decides (see core-relay's held-end test).
      connector: { bucketLimit: 1000, bucketWindowMs: 1000, needsFinalWrite: true },
      settings: { streamEditIntervalMs: 100 },
    });
    let storm = false;
    let refused = 0;
    h.conn.fault = () => {
      if (!storm) return undefined;
      refused++;
      return new PlatformRateLimitedError('test:channel:C1', 150);
    };
    const texts = [1, 2, 3].map((i) => `question ${i} [long ${1500 + i * 1000}] [chunks 40] [delay 25]`);
    const replies = texts.map((text) => h.conn.send({ text }));
    await waitFor(() => h.conn.writes.length > 0, 5_000, 'the first write');
    storm = true;
    await new Promise((r) => setTimeout(r, 1_500));
    storm = false;
    for (const r of await Promise.all(replies)) expect(r).toEqual({ status: 'answered' });

    expect(refused).toBeGreaterThan(3);
    const parts = h.conn.contentsIn('C1');
    const expected = [1, 2, 3].map((i) => longMarkdown(1500 + i * 1000));
    // 2000 chars a message: replies of 2500, 3500 and 4500 chars take 2, 2 and 3 messages
    expect(parts.length).toBeGreaterThanOrEqual(7);
    const byReply = splitByReply(h, expected);
    for (const [i, exp] of expected.entries())
      expect(partsProblems(byReply[i] ?? [], exp), `reply ${i + 1}`).toEqual([]);
    expect(h.conn.violations).toEqual([]);
    for (const m of h.conn.messagesIn('C1')) expect(m.final).toBe(true);
  }, 40_000);

  it('a bucket that allows 3 writes a second but claims 100 and never says so: four channels of long replies finish exact', async () => {
    await h?.close();
    h = await startCore({
      connector: { bucketLimit: 3, bucketWindowMs: 1000, declaredLimit: 100, reportHeaders: false },
      settings: { streamEditIntervalMs: 50 },
    });
    const lengths = [2600, 3100, 4300, 1900];
    const replies = lengths.map((n, i) =>
      h.conn.send({
        text: `q [long ${n}] [chunks 30] [delay 20]`,
        channelId: `K${i}`,
        place: { platform: 'test', channelId: `K${i}` },
      }),
    );
    for (const r of await Promise.all(replies)) expect(r).toEqual({ status: 'answered' });
    expect(h.conn.rateLimitHits).toBeGreaterThan(0);
    lengths.forEach((n, i) => {
      expect(partsProblems(h.conn.contentsIn(`K${i}`), longMarkdown(n)), `channel K${i}`).toEqual([]);
    });
    expect(h.conn.violations).toEqual([]);
  }, 40_000);
});

/** The channel's messages grouped per reply: a reply's messages are consecutive (one reply at a time per place). */
function splitByReply(h: CoreHarness, expected: string[]): string[][] {
  const msgs = h.conn.messagesIn('C1').map((m) => m.content);
  const out: string[][] = [];
  let at = 0;
  for (const exp of expected) {
    const group: string[] = [];
    while (
      at < msgs.length &&
      partsProblems(group, exp).some((p) => p.startsWith('the parts end before the text does'))
    ) {
      group.push(msgs[at] as string);
      at++;
    }
    out.push(group);
  }
  return out;
}

// The real discord.js connector against the fake Discord, behind a proxy that answers 429 to
// every message create/edit while the storm lasts (with Discord's headers and body).

describe('fake Discord: a 429 storm on message writes', () => {
  let fake: FakeDiscord;
  let proxy: ApiProxy;
  let storm = false;
  let h: CoreHarness;
  let connector: DiscordConnector;

  beforeAll(async () => {
    fake = await startFakeDiscord({ rateLimit: { limit: 50, windowMs: 1000 } });
    proxy = await startProxy(fake.apiUrl);
    proxy.intercept = (req) => {
      const write =
        (req.method === 'POST' || req.method === 'PATCH') &&
        /\/channels\/\d+\/messages(\/\d+)?$/.test((req.url ?? '').split('?')[0] ?? '');
      return storm && write ? discord429(0.4) : undefined;
    };
    h = await startCore({ settings: { streamEditIntervalMs: 150 } });
    connector = createDiscordConnector({
      config: { botToken: fake.token, apiUrl: proxy.url, replyMode: 'inline', allowedGuilds: [], allowedChannels: [] },
      logger: silentLogger,
      rateLimits: h.relay.rateLimits,
      assumedBudget: { limit: 10, windowMs: 1000 },
    });
    await connector.start(h.relay);
  });
  afterAll(async () => {
    await connector?.shutdown();
    await h?.close();
    await proxy?.close();
    await fake?.close();
    assertNoPings(fake?.record ?? []);
  });

  it('three long replies in three channels, message writes refused for 2 s mid-stream: every reply exact, split at 2000', async () => {
    const guild = fake.addGuild('g');
    const channels = [fake.addChannel(guild, 'a'), fake.addChannel(guild, 'b'), fake.addChannel(guild, 'c')];
    const lengths = [3000, 4200, 5100];
    for (const [i, channelId] of channels.entries()) {
      fake.dispatchMessage({
        channelId,
        authorId: `20000000000000000${i}`,
        content: `<@${fake.botUser.id}> question [long ${lengths[i]}] [chunks 50] [delay 40]`,
        mentionsBot: true,
      });
    }
    await fake.waitUntil(() => channels.some((c) => fake.botMessages(c).length > 0), 10_000, 'a first reply message');
    storm = true;
    await new Promise((r) => setTimeout(r, 2_000));
    storm = false;

    const done = (i: number) =>
      partsProblems(
        fake.botMessages(channels[i] as string).map((m) => m.content),
        longMarkdown(lengths[i] as number),
      ).length === 0;
    await fake.waitUntil(() => done(0) && done(1) && done(2), 25_000, 'three exact replies');
    // settle: no write may follow that changes them (none can once no reply is running)
    await waitFor(() => h.relay.stats().inFlight + h.relay.stats().queued === 0, 10_000, 'the replies to end');
    channels.forEach((c, i) => {
      expect(
        partsProblems(
          fake.botMessages(c).map((m) => m.content),
          longMarkdown(lengths[i] as number),
        ),
        `channel ${i}`,
      ).toEqual([]);
    });
    expect(proxy.intercepted).toBeGreaterThan(0);
    // no mention ever parsed, also in the retried writes
    for (const w of fake.record.filter((r) => r.path.includes('/messages')))
      expect(w.allowed_mentions).toEqual({ parse: [] });
    // the one user message per channel got one reply (no duplicate post after a refused write)
    expect(h.upstreamCalls()).toBe(3);
  }, 45_000);
});

// The real Bolt-based Slack connector (Socket Mode, edit streaming) against the fake Slack, behind
// a proxy that answers 429 with Retry-After to every chat.postMessage / chat.update for a while.

describe('fake Slack: a 429 storm on chat.postMessage and chat.update', () => {
  let slack: FakeSlack;
  let proxy: ApiProxy;
  let h: CoreHarness;
  let connector: SlackConnector;
  let storm = false;

  beforeAll(async () => {
    slack = await startFakeSlack({ limits: {} });
    proxy = await startProxy(slack.apiUrl);
    proxy.intercept = (req) => {
      const write = /chat\.(postMessage|update)/.test(req.url ?? '');
      return storm && write
        ? {
            status: 429,
            headers: { 'retry-after': '1', 'content-type': 'application/json' },
            body: '{"ok":false,"error":"ratelimited"}',
          }
        : undefined;
    };
    h = await startCore({ emulator: { maxMessageChars: 20_000 }, settings: { streamEditIntervalMs: 150 } });
    connector = createSlackConnector({
      config: {
        botToken: slack.botToken,
        oauth: undefined,
        appToken: slack.appToken,
        signingSecret: slack.signingSecret,
        apiUrl: proxy.url,
        streaming: 'edit',
        allowedTeams: [],
        allowedChannels: [],
      },
      logger: silentLogger,
      rateLimits: h.relay.rateLimits,
    });
    await connector.start(h.relay);
    await slack.waitConnected();
  });
  afterAll(async () => {
    await connector?.shutdown();
    await h?.close();
    await proxy?.close();
    await slack?.close();
  });

  it('three long replies in three channels, writes refused for 2.5 s mid-stream: every reply whole, none doubled', async () => {
    const channels = ['C0STORMA', 'C0STORMB', 'C0STORMC'];
    // Plain words render the same in mrkdwn, so the parts can be compared with the echo.
    const bodies = channels.map((_, i) => Array.from({ length: 500 + 150 * i }, (_, k) => `w${i}x${k}`).join(' '));
    const posts = await Promise.all(
      channels.map(async (channel, i) => {
        const p = slack.userPost({ channel, text: `<@${slack.botUserId}> ${bodies[i]} [chunks 60] [delay 40]` });
        await slack.sendEvent(p.mention as Record<string, unknown>);
        return p;
      }),
    );
    await waitFor(
      () => posts.some((p, i) => slack.botMessages(channels[i] as string, p.ts).length > 0),
      10_000,
      'a first reply message',
    );
    storm = true;
    await new Promise((r) => setTimeout(r, 2_500));
    storm = false;

    const words = (t: string) => t.split(/\s+/).filter((w) => w !== '');
    const shown = (i: number) =>
      words(
        slack
          .botMessages(channels[i] as string, posts[i]?.ts)
          .map((m) => m.text)
          .join(' '),
      );
    const want = (i: number) => words(`You said: ${bodies[i]} [chunks 60] [delay 40]`);
    await waitFor(
      () => [0, 1, 2].every((i) => shown(i).join(' ') === want(i).join(' ')),
      30_000,
      'three whole replies',
    );
    // no write may follow that changes them (none can once no reply is running)
    await waitFor(() => h.relay.stats().inFlight + h.relay.stats().queued === 0, 10_000, 'the replies to end');
    for (const i of [0, 1, 2]) {
      expect(shown(i)).toEqual(want(i));
      for (const m of slack.botMessages(channels[i] as string, posts[i]?.ts))
        expect(m.text.length).toBeLessThanOrEqual(3900);
    }
    expect(proxy.intercepted).toBeGreaterThan(0);
    expect(h.upstreamCalls()).toBe(3);
  }, 50_000);
});
