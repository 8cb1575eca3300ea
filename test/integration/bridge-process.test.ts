import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/index.js';
import { startFakeDiscord } from '../fakes/discord/index.js';
import { assertNoPings } from '../fakes/discord/writes.js';
import { startFakeSlack } from '../fakes/slack/index.js';
import { assertNoSlackPings } from '../fakes/slack/mention-check.js';
import { type BridgeChild, ensureBuilt, killHard, spawnBridge } from '../resilience/bridge-child.js';

// The real `assistant-bridge start` process, as an operator runs it, with both platforms at once:
// Slack over Socket Mode and Discord over the gateway, against the loopback fakes and the emulator.

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
type FakeDiscord = Awaited<ReturnType<typeof startFakeDiscord>>;
type FakeSlack = Awaited<ReturnType<typeof startFakeSlack>>;

const ROOT = resolve(import.meta.dirname, '../..');
let emu: Emulator;
let discord: FakeDiscord;
let slack: FakeSlack;
let bridge: BridgeChild | undefined;
let dir: string;
let guildId: string;
let channelId: string;

beforeAll(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'bridge-process-'));
  emu = await startEmulator({ port: 0, chunkDelayMs: 2 });
  discord = await startFakeDiscord();
  guildId = discord.addGuild('acme');
  channelId = discord.addChannel(guildId, 'general');
  slack = await startFakeSlack();
  bridge = await spawnBridge({
    CHAT_API_URL: emu.url,
    CHAT_API_KEY: 'dev-key',
    CHAT_BOT_ID: 'demo-bot',
    DISCORD_BOT_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiUrl,
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_APP_TOKEN: slack.appToken,
    SLACK_API_URL: slack.apiUrl,
    SLACK_STREAMING: 'edit',
    STREAM_EDIT_INTERVAL_MS: '100',
    DATABASE_PATH: join(dir, 'data', 'bridge.db'),
  });
  await bridge.waitReady(30_000);
}, 120_000);

afterAll(async () => {
  await killHard(bridge);
  await Promise.allSettled([emu?.close(), discord?.close(), slack?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
  assertNoPings(discord?.record ?? []);
  assertNoSlackPings(slack?.calls ?? []);
});

describe('assistant-bridge start (real process, both platforms)', () => {
  it('is healthy and ready with both connectors connected', async () => {
    const health = await fetch(`${bridge!.base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await bridge!.readyz();
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body).checks).toEqual({ database: true, discord: true, slack: true, accepting: true });
  });

  it('answers a Discord mention in a thread and a Slack mention in its thread', async () => {
    const user = discord.dispatchMessage({
      channelId,
      authorId: '100000000000000001',
      content: `<@${discord.botUser.id}> hello from discord`,
      mentionsBot: true,
    });
    const threadId = String(user.id);
    await discord.waitUntil(
      () => discord.botMessages(threadId).find((m) => m.content === 'You said: hello from discord'),
      15_000,
      'the Discord reply',
    );

    const post = slack.userPost({ channel: 'C1', text: `<@${slack.botUserId}> hello from slack` });
    await slack.sendEvent(post.mention!);
    // Every Web API call is an event of the fake: the reply is checked after each one.
    await slack
      .waitForCall(() => slack.botMessages('C1', post.ts).some((m) => m.text === 'You said: hello from slack'), 15_000)
      .catch(() => {
        throw new Error(`no Slack reply:\n${bridge!.tail()}`);
      });
    const asked = emu.requests
      .filter((r) => r.endpoint === 'stream')
      .map((r) => (r.metadata as { source?: string } | undefined)?.source);
    expect(asked.sort()).toEqual(['discord', 'slack']);
  });

  it('reports the replies in /metrics', async () => {
    const res = await fetch(`${bridge!.base}/metrics`);
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toMatch(/bridge_replies_finished_total\{platform="discord"\} 1/);
    expect(text).toMatch(/bridge_replies_finished_total\{platform="slack"\} 1/);
    expect(text).toContain('bridge_upstream_first_token_seconds_bucket');
    expect(text).toContain('bridge_platform_writes_total');
    expect(text).toContain('process_resident_memory_bytes');
  });

  it('exits 0 on SIGTERM', async () => {
    bridge!.kill('SIGTERM');
    await bridge!.exited;
    expect(bridge!.exitSignal, bridge!.tail()).toBeNull();
    expect(bridge!.exitCode, bridge!.tail()).toBe(0);
  });
});

describe('assistant-bridge start with bad configuration', () => {
  const runCli = (env: Record<string, string>) =>
    new Promise<{ code: number | null; stderr: string }>((res) => {
      const child = spawn(process.execPath, [join(ROOT, 'dist', 'cli.js'), 'start'], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      child.on('exit', (code) => res({ code, stderr }));
    });

  it('exits 2 naming the missing variables when no platform is configured and the playground is off', async () => {
    // With PLAYGROUND unset (auto), no platform runs the playground instead (playground-start.test.ts).
    const { code, stderr } = await runCli({
      CHAT_API_URL: 'http://127.0.0.1:1',
      CHAT_API_KEY: 'k',
      CHAT_BOT_ID: 'b',
      PLAYGROUND: 'off',
    });
    expect(code).toBe(2);
    expect(stderr).toContain('SLACK_BOT_TOKEN');
    expect(stderr).toContain('DISCORD_BOT_TOKEN');
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('exits 2 naming a malformed variable', async () => {
    const { code, stderr } = await runCli({
      ...{ CHAT_API_URL: 'http://127.0.0.1:1', CHAT_API_KEY: 'k', CHAT_BOT_ID: 'b' },
      DISCORD_BOT_TOKEN: 'x',
      MAX_CONCURRENT_REPLIES: 'lots',
    });
    expect(code).toBe(2);
    expect(stderr).toContain('MAX_CONCURRENT_REPLIES');
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 1 naming the database (without its password) when DATABASE_URL cannot be reached', async () => {
    const { code, stderr } = await runCli({
      ...{ CHAT_API_URL: 'http://127.0.0.1:1', CHAT_API_KEY: 'k', CHAT_BOT_ID: 'b' },
      DISCORD_BOT_TOKEN: 'x',
      DATABASE_URL: 'postgres://bridge:s3cret@127.0.0.1:1/bridge',
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/cannot open postgres:\/\/bridge@127\.0\.0\.1:1\/bridge/);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stderr).not.toContain('s3cret');
  });
});
