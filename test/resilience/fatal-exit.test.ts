import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSlack } from '../fakes/slack/index.js';
import { type BridgeChild, type ChildWorld, killHard, spawnBridge, startChildWorld } from './bridge-child.js';

// "Fatal means exit": a connector that cannot start ends the real process (`node dist/cli.js
// start`) with a non-zero status, after one log line saying what failed and what to check, and
// nothing keeps running after it (no heartbeat, no check). What a supervisor (Docker's or
// Kubernetes' restart policy) sees: the exit status, and what an operator reads: the log.

const API_KEY = 'fatal-key';
const BOT = 'demo-bot';
/**
 * CONTRACT §4: a fatal error ends the process within 10 s. Measured from the child's own fatal
 * line (its pino `time`) to the exit the parent sees, so start-up time on a loaded CI machine is
 * not counted; the 10 s is the contract's bound, not a guess at this machine's speed.
 */
const FATAL_EXIT_BOUND_MS = 10_000;
/** Waiting for the child to end at all; beyond the bound, only to report what happened. */
const GIVE_UP_MS = 40_000;

let world: ChildWorld | undefined;
let slack: Awaited<ReturnType<typeof startFakeSlack>> | undefined;
const children: BridgeChild[] = [];

beforeAll(async () => {
  world = await startChildWorld('fatal', API_KEY, BOT);
  slack = await startFakeSlack();
}, 120_000);

afterAll(async () => {
  for (const c of children) await killHard(c);
  await world?.close();
  await slack?.close();
});

interface LogLine {
  level: number;
  time: string;
  msg: string;
  [k: string]: unknown;
}

const parsed = (b: BridgeChild): LogLine[] =>
  b.log.flatMap((l) => {
    try {
      return [JSON.parse(l) as LogLine];
    } catch {
      return [];
    }
  });

/** Spawns the bridge and waits for it to end (bounded); returns when it ended (parent's clock). */
async function runUntilExit(env: Record<string, string>): Promise<{ child: BridgeChild; endedAt: number }> {
  const child = await spawnBridge({
    CHAT_API_URL: world!.emu.url,
    CHAT_API_KEY: API_KEY,
    CHAT_BOT_ID: BOT,
    DATABASE_PATH: join(world!.dir, `fatal-${children.length}.db`),
    // A heartbeat every second: a process that lingered would log `heartbeat failed` at once.
    REPLICA_LEASE_SECONDS: '3',
    ...env,
  });
  children.push(child);
  let endedAt = 0;
  await Promise.race([child.exited.then(() => (endedAt = Date.now())), new Promise((r) => setTimeout(r, GIVE_UP_MS))]);
  return { child, endedAt };
}

function expectOneFatalLine(child: BridgeChild, endedAt: number, what: RegExp, check: RegExp): void {
  const tail = child.tail(60);
  expect(child.exitSignal, tail).toBeNull();
  expect(child.exitCode, tail).toBeTypeOf('number');
  expect(child.exitCode, tail).not.toBe(0);
  const lines = parsed(child);
  // One clear line (level fatal = 60): what failed and what to check. No other error before or after.
  const serious = lines.filter((l) => l.level >= 50);
  expect(
    serious.map((l) => l.msg),
    tail,
  ).toHaveLength(1);
  const fatal = serious[0]!;
  expect(fatal.level, tail).toBe(60);
  expect(fatal.msg, tail).toMatch(what);
  expect(fatal.msg, tail).toMatch(check);
  // Nothing ran on after it: no heartbeat, no check, no reconnect.
  expect(
    lines.filter((l) => /heartbeat failed/.test(l.msg)),
    tail,
  ).toEqual([]);
  const exitMs = endedAt - Date.parse(fatal.time);
  console.info(`fatal line → exit in ${exitMs} ms`);
  expect(exitMs, tail).toBeLessThan(FATAL_EXIT_BOUND_MS);
}

describe('a connector that cannot start ends the process', () => {
  it('Discord answers 401 at login: non-zero exit, one line naming DISCORD_BOT_TOKEN', async () => {
    const { child, endedAt } = await runUntilExit({
      DISCORD_BOT_TOKEN: 'not.the.right.token',
      DISCORD_API_URL: world!.fake.apiUrl,
    });
    expectOneFatalLine(child, endedAt, /discord connector cannot start/, /check DISCORD_BOT_TOKEN/);
  }, 60_000);

  it('Discord closes the gateway for good after start (4004, a reset token): non-zero exit, one line', async () => {
    const child = await spawnBridge({
      CHAT_API_URL: world!.emu.url,
      CHAT_API_KEY: API_KEY,
      CHAT_BOT_ID: BOT,
      DATABASE_PATH: join(world!.dir, `fatal-${children.length}.db`),
      REPLICA_LEASE_SECONDS: '3',
      DISCORD_BOT_TOKEN: world!.fake.token,
      DISCORD_API_URL: world!.fake.apiUrl,
    });
    children.push(child);
    await child.waitReady();
    world!.fake.disconnectGateway(4004);
    let endedAt = 0;
    await Promise.race([
      child.exited.then(() => (endedAt = Date.now())),
      new Promise((r) => setTimeout(r, GIVE_UP_MS)),
    ]);
    expectOneFatalLine(child, endedAt, /discord connector stopped for good: .*4004/, /check DISCORD_BOT_TOKEN/);
  }, 60_000);

  it('Slack auth.test says invalid_auth: non-zero exit, one line naming SLACK_BOT_TOKEN', async () => {
    const { child, endedAt } = await runUntilExit({
      SLACK_BOT_TOKEN: 'xoxb-not-the-right-token',
      SLACK_SIGNING_SECRET: slack!.signingSecret,
      SLACK_API_URL: slack!.apiUrl,
    });
    expectOneFatalLine(child, endedAt, /slack connector cannot start: .*invalid_auth/, /check SLACK_BOT_TOKEN/);
  }, 60_000);
});
