import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BridgeChild, ensureBuilt, killHard, spawnBridge } from '../resilience/bridge-child.js';
import { freePort } from '../fakes/free-port.js';

// What a newcomer tries first, as the real command (`node dist/cli.js ...`) in an empty folder
// with only the variables each case names: nothing of a developer's .env reaches it (the folder
// is outside the project, where no .env is read from the project folder).

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist', 'cli.js');

let dir: string;
let child: BridgeChild | undefined;
beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'bridge-first-hour-'));
}, 120_000);
afterEach(async () => {
  await killHard(child);
  child = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((res) => {
    const p = spawn(process.execPath, [CLI, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HOME: dir, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 30_000,
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    p.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    p.on('close', (code) => res({ code, stdout, stderr }));
  });
}

const UPSTREAM = { CHAT_API_URL: 'http://127.0.0.1:1', CHAT_API_KEY: 'k', CHAT_BOT_ID: 'b' };

describe('the first commands', () => {
  it('doctor with nothing configured passes as start would run: the playground on the built-in emulator', async () => {
    const r = await cli(['doctor', '--timeout-ms', '5000'], { PORT: '3999' });
    expect(r.stdout).toMatch(/^config\s+ok\s+valid; .*the playground at \/ \(built-in emulator\)$/m);
    expect(r.stdout).toMatch(/^playground\s+ok\s+http:\/\/127\.0\.0\.1:3999\/ \(this machine only; /m);
    expect(r.stdout).toMatch(/^upstream\s+ok\s+none configured \(no CHAT_API_URL\): start runs the built-in emulator/m);
    expect(r.stdout).toContain('0 failed');
    expect(r.code).toBe(0);
    // doctor creates nothing, and the default database would be in this folder's data/.
    expect(r.stdout).toContain(join(dir, 'data', 'bridge.db'));
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('--help names the playground', async () => {
    for (const args of [['--help'], ['start', '--help']]) {
      const r = await cli(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/playground/);
      expect(r.stdout).toContain('http://127.0.0.1:');
    }
  });
});

describe('Slack tokens are checked before anything starts', () => {
  const slack = { ...UPSTREAM, SLACK_SIGNING_SECRET: 'signing-secret' };
  const noStack = (s: string) => expect(s).not.toMatch(/\n\s+at /);

  it('an app token without a bot token: exit 2, named', async () => {
    const r = await cli(['start'], { ...UPSTREAM, SLACK_APP_TOKEN: 'xapp-1-A1-123-abcdef' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('SLACK_APP_TOKEN is set but SLACK_BOT_TOKEN is not');
    expect(r.stderr).not.toContain('xapp-1-A1-123-abcdef');
    noStack(r.stderr);
  });

  it('swapped tokens: exit 2, one line naming both', async () => {
    const r = await cli(['start'], {
      ...slack,
      SLACK_BOT_TOKEN: 'xapp-1-A1-123-abcdef',
      SLACK_APP_TOKEN: 'xoxb-1-2-abc',
    });
    expect(r.code).toBe(2);
    const problems = r.stderr.split('\n').filter((l) => l.startsWith('  - '));
    expect(problems).toEqual([
      '  - SLACK_BOT_TOKEN and SLACK_APP_TOKEN are swapped: the bot token (xoxb-…) goes in SLACK_BOT_TOKEN, the app-level token (xapp-…) in SLACK_APP_TOKEN',
    ]);
    noStack(r.stderr);
  });

  it('a user token as the bot token, a bot token as the app token: one line each', async () => {
    const r = await cli(['start'], { ...slack, SLACK_BOT_TOKEN: 'xoxp-1-2-abc', SLACK_APP_TOKEN: 'xoxb-1-2-abc' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^ {2}- SLACK_BOT_TOKEN holds a user token \(xoxp-\): it takes the Bot User OAuth Token/m);
    expect(r.stderr).toMatch(/^ {2}- SLACK_APP_TOKEN holds a bot token \(xoxb-\): it takes an app-level token/m);
    expect(r.stderr).not.toMatch(/xoxp-1-2-abc|xoxb-1-2-abc/);
    noStack(r.stderr);
  });
});

describe('start says what is wrong, and how to get out', () => {
  it('a database it cannot open: exit 1, the fix named with the user', async () => {
    writeFileSync(join(dir, 'a-file'), 'x');
    const r = await cli(['start'], {
      ...UPSTREAM,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_PATH: join(dir, 'a-file', 'bridge.db'),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot open ${join(dir, 'a-file', 'bridge.db')}`);
    expect(r.stderr).toMatch(/DATABASE_PATH must be a file in a folder this user \(.*uid \d+\) can create and write/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('a misspelt variable: start warns naming the meant one, doctor shows a WARN row', async () => {
    const typo = { CHAT_API_BASE_URL: 'http://127.0.0.1:9/', PORT: '3999' };
    const r = await cli(['doctor'], typo);
    expect(r.stdout).toMatch(
      /^config names\s+WARN\s+CHAT_API_BASE_URL in the environment is not a variable the bridge reads and is ignored: did you mean CHAT_API_URL\?/m,
    );
    child = await spawnBridge({ CHAT_API_BASE_URL: 'http://127.0.0.1:9/', DATABASE_PATH: join(dir, 'typo.db') });
    await child.waitReady();
    const warned = child.log.filter((l) => l.includes('did you mean CHAT_API_URL?'));
    expect(warned, child.tail()).toHaveLength(1);
    expect((JSON.parse(warned[0] ?? '{}') as { level: number }).level).toBe(40);
  });

  it('an upstream that does not answer: one warning at once, the playground still runs; the first Ctrl-C says a second exits now', async () => {
    const dead = await freePort();
    child = await spawnBridge({
      CHAT_API_URL: `http://127.0.0.1:${dead}`,
      CHAT_API_KEY: 'k',
      CHAT_BOT_ID: 'b',
      DATABASE_PATH: join(dir, 'warn.db'),
    });
    await child.waitReady();
    const deadline = Date.now() + 15_000;
    const warned = () => child?.log.filter((l) => l.includes('the upstream does not answer as it should')) ?? [];
    while (warned().length === 0 && Date.now() < deadline && child.exitCode === undefined) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(warned(), child.tail()).toHaveLength(1);
    const line = JSON.parse(warned()[0] ?? '{}') as { level: number; msg: string };
    expect(line.level).toBe(40);
    expect(line.msg).toContain(`http://127.0.0.1:${dead}`);
    expect(line.msg).toContain('check CHAT_API_URL');
    expect((await child.readyz()).status).toBe(200);

    child.kill('SIGINT');
    await child.exited;
    expect(child.exitCode, child.tail()).toBe(0);
    expect(child.log.join('\n')).toContain('press Ctrl-C again to exit now');
  });
});
