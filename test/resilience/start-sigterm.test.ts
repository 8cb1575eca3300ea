import { expect, it } from 'vitest';
import { childWorldPerFile } from './bridge-child.js';
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

const files = childWorldPerFile('start-sigterm', API_KEY, BOT);

/** A bridge on the fake Discord with a new guild whose slash-command registration is held (start() waits there). */
async function spawnHeldAtRegistration(guildName: string, db: string) {
  const { fake } = files.world;
  const guild = fake.addGuild(guildName);
  fake.addChannel(guild, 'general');
  // The commands are registered for each guild (guild-scoped): holding one holds start().
  const held = fake.holdRoute('PUT', `/applications/${fake.applicationId}/guilds/${guild}/commands`);
  const child = await files.spawn(files.world.discordEnv(db));
  return { held, child };
}

it('SIGTERM while start() waits for the slash-command registration: not ready meanwhile, drains, exits 0', async () => {
  // One guild so far.
  const { held, child } = await spawnHeldAtRegistration('g', 'bridge.db');
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
  // Two guilds now: holding the new one's registration holds start().
  const { held, child } = await spawnHeldAtRegistration('h', 'bridge2.db');
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
