import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../src/core/user-messages.js';
import { splitText } from '../../src/emulator/replies.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { type BridgeChild, childWorldPerFile, killHard, spawnBridge } from './bridge-child.js';
import { waitFor } from './harness.js';
import { type ApiProxy, startProxy } from './proxy.js';

// The platform connection drops and stays down for a while, then comes back: /readyz says 503
// (naming what is not ready) during the outage and 200 after, and a message sent after the
// restore is answered exactly once.

const API_KEY = 'reconnect-key';
const BOT = 'demo-bot';

const files = childWorldPerFile('reconnect', API_KEY, BOT);
/** The Discord bridge and channel of the first test, which the second goes on with. */
let bridge: BridgeChild | undefined;
let discordChannel = '';

describe('Discord gateway outage', () => {
  it('/readyz goes 503 while the gateway is down and 200 once it is back; a message after the restore is answered once', async () => {
    const { fake, emu } = files.world;
    const guild = fake.addGuild('g');
    const channel = fake.addChannel(guild, 'general');
    bridge = await files.spawn({
      ...files.world.discordEnv(),
      CHAT_API_FORM: 'b',
      DISCORD_REPLY_MODE: 'inline',
      STREAM_EDIT_INTERVAL_MS: '200',
      CHAT_STREAM_IDLE_TIMEOUT_MS: '1000',
    });
    await bridge.waitReady();
    const b = bridge;
    discordChannel = channel;

    // The outage: the gateway refuses new connections (resume and identify alike) and the
    // current one is dropped with a resumable code.
    const gateway = fake.gateway as unknown as {
      handleUpgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
    };
    const realUpgrade = gateway.handleUpgrade.bind(fake.gateway);
    let refusedUpgrades = 0;
    gateway.handleUpgrade = (_req, socket) => {
      refusedUpgrades++;
      socket.destroy();
    };
    try {
      fake.disconnectGateway(4000);
      const down = await waitFor(
        async () => {
          const r = await b.readyz();
          return r.status === 503 ? r : undefined;
        },
        10_000,
        '/readyz to say 503',
      );
      expect(down.body.toLowerCase()).toContain('discord');
      // stays down while the gateway is unreachable: still 503 after a later refused reconnect
      const refusedBefore = refusedUpgrades;
      await waitFor(() => refusedUpgrades > refusedBefore, 15_000, 'another refused reconnect');
      expect((await b.readyz()).status).toBe(503);
    } finally {
      gateway.handleUpgrade = realUpgrade;
    }
    expect(refusedUpgrades).toBeGreaterThan(0);

    await waitFor(async () => (await b.readyz()).status === 200, 30_000, '/readyz to say 200 again');

    fake.dispatchMessage({
      channelId: channel,
      authorId: '500000000000000001',
      content: `<@${fake.botUser.id}> back again`,
      mentionsBot: true,
    });
    await fake.waitUntil(
      () => fake.botMessages(channel).some((m) => m.content === 'You said: back again'),
      15_000,
      'the reply after the restore',
    );
    // a replay of the session must not answer it twice: replies in a channel keep the order of
    // its messages, so once a later message is answered, a replay before it would show
    fake.dispatchMessage({
      channelId: channel,
      authorId: '500000000000000001',
      content: `<@${fake.botUser.id}> barrier`,
      mentionsBot: true,
    });
    await fake.waitUntil(
      () => fake.botMessages(channel).some((m) => m.content === 'You said: barrier'),
      15_000,
      'the reply to a later message',
    );
    expect(fake.botMessages(channel).map((m) => m.content)).toEqual(['You said: back again', 'You said: barrier']);
    expect(emu.requests.filter((r) => r.message === 'back again')).toHaveLength(1);
  }, 60_000);

  it('CHAT_STREAM_IDLE_TIMEOUT_MS reaches the upstream client: a stalled stream ends after it with the text so far and the note', async () => {
    const { fake, emu } = files.world;
    const b = bridge as BridgeChild;
    expect((await b.readyz()).status).toBe(200);
    const text = 'stall please [chunks 6] [stall 2]';
    const started = Date.now();
    fake.dispatchMessage({
      channelId: discordChannel,
      authorId: '500000000000000001',
      content: `<@${fake.botUser.id}> ${text}`,
      mentionsBot: true,
    });
    const pieces = splitText(`You said: ${text}`, 6);
    const expected = pieces.slice(0, 2).join('') + MESSAGES.interrupted;
    await fake.waitUntil(
      () => fake.botMessages(discordChannel).some((m) => m.content === expected),
      10_000,
      'the stalled reply to be marked',
    );
    const elapsed = Date.now() - started;
    // Lower bound: the configured idle timeout had to pass (slowness only adds). End-to-end bound,
    // reason: the setting must reach the client: the default (60 s) would blow far past 6 s.
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(6_000);
    expect(emu.requests.filter((r) => r.message === text)).toHaveLength(1);
    // the bridge let the stalled stream go (the emulator sees the socket close)
    await waitFor(() => emu.openStreams === 0, 5_000, 'the stalled stream to be closed');
  }, 30_000);
});

describe('Slack Socket Mode outage', () => {
  let slack: FakeSlack;
  let api: ApiProxy;
  let slackBridge: BridgeChild | undefined;
  afterAll(async () => {
    await killHard(slackBridge);
    await api?.close();
    await slack?.close();
  });

  it('/readyz goes 503 while Socket Mode cannot reconnect and 200 once it can; a mention after the restore is answered once', async () => {
    const { emu, dir } = files.world;
    slack = await startFakeSlack();
    api = await startProxy(slack.apiUrl);
    slackBridge = await spawnBridge({
      ...files.world.upstreamEnv(),
      CHAT_API_FORM: 'b',
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_APP_TOKEN: slack.appToken,
      SLACK_API_URL: api.url,
      SLACK_STREAMING: 'edit',
      DATABASE_PATH: join(dir, 'slack.db'),
      STREAM_EDIT_INTERVAL_MS: '200',
    });
    await slackBridge.waitReady();
    const b = slackBridge;

    // The outage: the socket is cut and apps.connections.open (the way back) fails.
    let down = true;
    let refusedOpens = 0;
    api.intercept = (req) => {
      if (!down || !(req.url ?? '').includes('apps.connections.open')) return undefined;
      refusedOpens++;
      return { status: 503, body: 'unavailable' };
    };
    slack.dropSocket();
    const report = await waitFor(
      async () => {
        const r = await b.readyz();
        return r.status === 503 ? r : undefined;
      },
      10_000,
      '/readyz to say 503',
    );
    expect(report.body.toLowerCase()).toContain('slack');
    // still 503 after a later refused reconnect
    const refusedBefore = refusedOpens;
    await waitFor(() => refusedOpens > refusedBefore, 15_000, 'another refused reconnect');
    expect((await b.readyz()).status).toBe(503);
    expect(slack.socketConnected).toBe(false);
    down = false;

    await waitFor(async () => (await b.readyz()).status === 200, 40_000, '/readyz to say 200 again');
    expect(slack.socketConnected).toBe(true);

    const posted = slack.userPost({ channel: 'C0GENERAL', text: `<@${slack.botUserId}> back on slack` });
    await slack.sendEvent(posted.mention as Record<string, unknown>);
    await waitFor(
      () => slack.botMessages('C0GENERAL', posted.ts).some((m) => m.text === 'You said: back on slack'),
      15_000,
      'the reply in the thread',
    );
    // Answered once: replies in a thread keep the order of its messages, so once a later one is
    // answered, a redelivery before it would show.
    await slack.sendEvent(slack.userPost({ channel: 'C0GENERAL', text: 'barrier', threadTs: posted.ts }).message);
    await waitFor(
      () => slack.botMessages('C0GENERAL', posted.ts).some((m) => m.text === 'You said: barrier'),
      15_000,
      'the reply to a later message in the thread',
    );
    expect(slack.botMessages('C0GENERAL', posted.ts).map((m) => m.text)).toEqual([
      'You said: back on slack',
      'You said: barrier',
    ]);
    expect(emu.requests.filter((r) => r.message === 'back on slack')).toHaveLength(1);
  }, 60_000);
});
