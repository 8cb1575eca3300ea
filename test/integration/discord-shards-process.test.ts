import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardOf } from '../fakes/discord/index.js';
import {
  type BridgeChild,
  type ChildWorld,
  killHard,
  spawnBridge,
  startChildWorld,
} from '../resilience/bridge-child.js';

// DISCORD_SHARD_COUNT and DISCORD_SHARD_IDS through the real `assistant-bridge start`: the
// environment reaches discord.js, and a bad pair stops start-up with exit 2 naming the variable.

const ROOT = resolve(import.meta.dirname, '../..');
const API_KEY = 'test-key';
const BOT = 'demo-bot';
const USER = '500000000000000001';

let world: ChildWorld;
let bridge: BridgeChild | undefined;

beforeAll(async () => {
  world = await startChildWorld('shards', API_KEY, BOT);
}, 120_000);

afterAll(async () => {
  await killHard(bridge);
  await world?.close();
});

const upstream = () => ({
  CHAT_API_URL: world.emu.url,
  CHAT_API_KEY: API_KEY,
  CHAT_API_FORM: 'b',
  CHAT_BOT_ID: BOT,
});

describe('assistant-bridge start with Discord shards', () => {
  it('runs only the shards DISCORD_SHARD_IDS names and answers in their guilds', async () => {
    const { fake, dir } = world;
    const guild = fake.addGuild('on shard 1', { shard: 1, count: 2 });
    expect(shardOf(guild, 2)).toBe(1);
    const channel = fake.addChannel(guild, 'general');
    bridge = await spawnBridge({
      ...upstream(),
      DISCORD_BOT_TOKEN: fake.token,
      DISCORD_API_URL: fake.apiUrl,
      DISCORD_REPLY_MODE: 'inline',
      DISCORD_SHARD_COUNT: '2',
      DISCORD_SHARD_IDS: '1',
      DATABASE_PATH: join(dir, 'bridge.db'),
      STREAM_EDIT_INTERVAL_MS: '100',
    });
    await bridge.waitReady(30_000);
    expect(fake.gateway.connectedShards()).toEqual([[1, 2]]);
    expect(JSON.parse((await bridge.readyz()).body)).toMatchObject({ checks: { discord: true } });
    expect(bridge.log.some((l) => l.includes('"msg":"discord: shard ready"') && l.includes('"shard":1'))).toBe(true);

    fake.dispatchMessage({
      channelId: channel,
      authorId: USER,
      content: `<@${fake.botUser.id}> hello shard one`,
      mentionsBot: true,
    });
    await fake.waitUntil(
      () => fake.botMessages(channel).some((m) => m.content === 'You said: hello shard one'),
      15_000,
      'the answer on shard 1',
    );
  });
});

describe('assistant-bridge start with bad shard settings', () => {
  const runCli = (env: Record<string, string>) =>
    new Promise<{ code: number | null; stderr: string }>((res) => {
      const child = spawn(process.execPath, [join(ROOT, 'dist', 'cli.js'), 'start'], {
        cwd: world.dir,
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      child.on('exit', (code) => res({ code, stderr }));
    });

  it.each([
    [{ DISCORD_SHARD_COUNT: '2', DISCORD_SHARD_IDS: '0,2' }, /DISCORD_SHARD_IDS: shard ids must be below/],
    [{ DISCORD_SHARD_IDS: '0' }, /DISCORD_SHARD_IDS: needs DISCORD_SHARD_COUNT/],
    [{ DISCORD_SHARD_COUNT: 'two' }, /DISCORD_SHARD_COUNT: must be a whole number/],
  ])('exits 2 on %o, naming the variable, without a stack trace', async (extra, pattern) => {
    const { code, stderr } = await runCli({ ...upstream(), DISCORD_BOT_TOKEN: 'x', ...extra });
    expect(code).toBe(2);
    expect(stderr).toMatch(pattern);
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
