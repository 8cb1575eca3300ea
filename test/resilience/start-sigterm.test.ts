import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type BridgeChild, type ChildWorld, killHard, spawnBridge, startChildWorld } from './bridge-child.js';
import { waitFor } from './harness.js';

// "No window at start": the signal handlers are in place before any connector starts, and
// /readyz says 200 only once start has finished. The fake Discord holds the slash-command
// registration (PUT .../commands), so start() waits there with the gateway already connected;
// a SIGTERM then drains and exits 0, as a rolling deploy expects, instead of killing the process
// by the signal.

const API_KEY = 'start-key';
const BOT = 'demo-bot';
/** Bounds for the events awaited below; generous, they only stop a hung run. */
const WAIT_MS = 20_000;

let world: ChildWorld | undefined;
let bridge: BridgeChild | undefined;

beforeAll(async () => {
  world = await startChildWorld('start-sigterm', API_KEY, BOT);
}, 120_000);

afterAll(async () => {
  await killHard(bridge);
  await world?.close();
});

it('SIGTERM while start() waits for the slash-command registration: not ready meanwhile, drains, exits 0', async () => {
  const { fake, emu, dir } = world!;
  const guild = fake.addGuild('g');
  fake.addChannel(guild, 'general');
  // One guild: the commands are registered for it (guild-scoped).
  const held = fake.holdRoute('PUT', `/applications/${fake.applicationId}/guilds/${guild}/commands`);
  bridge = await spawnBridge({
    CHAT_API_URL: emu.url,
    CHAT_API_KEY: API_KEY,
    CHAT_BOT_ID: BOT,
    DISCORD_BOT_TOKEN: fake.token,
    DISCORD_API_URL: fake.apiUrl,
    DATABASE_PATH: join(dir, 'bridge.db'),
  });
  const child = bridge;
  await Promise.race([
    held.reached,
    child.exited.then(() => {
      throw new Error(`bridge exited (${child.exitCode ?? child.exitSignal}) before registering:\n${child.tail()}`);
    }),
    new Promise((_, reject) => setTimeout(() => reject(new Error(`no registration:\n${child.tail()}`)), WAIT_MS)),
  ]);
  // The gateway is up, but start() has not finished: a load balancer must not send traffic yet.
  await waitFor(() => child.log.some((l) => l.includes('discord: connected')), WAIT_MS, 'the gateway to connect');
  const ready = await child.readyz();
  expect(ready.status, child.tail()).toBe(503);
  expect(JSON.parse(ready.body).checks.accepting, child.tail()).toMatch(/starting/);

  child.kill('SIGTERM');
  await Promise.race([child.exited, new Promise((r) => setTimeout(r, WAIT_MS))]);
  held.release();
  const tail = child.tail(60);
  expect(child.exitSignal, tail).toBeNull();
  expect(child.exitCode, tail).toBe(0);
  expect(
    child.log.some((l) => l.includes('shutting down: draining')),
    tail,
  ).toBe(true);
  expect(
    child.log.some((l) => l.includes('"msg":"stopped"')),
    tail,
  ).toBe(true);
}, 60_000);

it('/readyz turns 200 only once start() has finished (the registration released)', async () => {
  const { fake, emu, dir } = world!;
  const guild = fake.addGuild('h');
  fake.addChannel(guild, 'general');
  // Two guilds now: both registrations are guild-scoped; holding one holds start().
  const held = fake.holdRoute('PUT', `/applications/${fake.applicationId}/guilds/${guild}/commands`);
  bridge = await spawnBridge({
    CHAT_API_URL: emu.url,
    CHAT_API_KEY: API_KEY,
    CHAT_BOT_ID: BOT,
    DISCORD_BOT_TOKEN: fake.token,
    DISCORD_API_URL: fake.apiUrl,
    DATABASE_PATH: join(dir, 'bridge2.db'),
  });
  const child = bridge;
  await held.reached;
  expect((await child.readyz()).status, child.tail()).toBe(503);
  held.release();
  await child.waitReady(WAIT_MS);
  // The line is written before /readyz turns 200, but the child's stdout pipe may deliver it
  // after the HTTP answer: await it rather than expect it already read.
  await waitFor(
    () => child.log.some((l) => l.includes('slash commands registered')),
    WAIT_MS,
    'the registration log line',
  );
  child.kill('SIGTERM');
  await Promise.race([child.exited, new Promise((r) => setTimeout(r, WAIT_MS))]);
  expect(child.exitCode, child.tail(60)).toBe(0);
}, 60_000);
