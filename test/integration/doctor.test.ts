import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/doctor.js';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { startFakeDiscord } from '../fakes/discord/index.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';

// `assistant-bridge doctor` as an operator runs it: against the upstream emulator (both forms)
// and the fake Discord, reading the printed table and the exit status.

let emu: Emulator;
let discord: Awaited<ReturnType<typeof startFakeDiscord>>;
let slack: FakeSlack;
let dir: string;

beforeAll(async () => {
  emu = await startEmulator({ bots: ['demo-bot', 'other-bot'] });
  discord = await startFakeDiscord();
  slack = await startFakeSlack();
  dir = mkdtempSync(join(tmpdir(), 'doctor-it-'));
});
afterAll(async () => {
  await emu.close();
  await discord.close();
  await slack.close();
  rmSync(dir, { recursive: true, force: true });
});

async function doctor(env: Record<string, string>, args: string[] = []) {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env: {
      CHAT_API_URL: emu.url,
      CHAT_API_KEY: 'dev-key',
      CHAT_BOT_ID: 'demo-bot',
      DATABASE_PATH: join(dir, 'bridge.db'),
      ...env,
    },
    dotenvPath: join(dir, 'no.env'),
  });
  /** The table row of a check: its status and the rest of the line. */
  const row = (check: string) => {
    const line = stdout.split('\n').find((l) => l.startsWith(`${check}  `));
    if (!line) throw new Error(`no row "${check}" in:\n${stdout}`);
    const [, status = '', ...rest] = line.split(/\s{2,}/);
    return { status, text: rest.join('  ') };
  };
  return { code, stdout, stderr, row };
}

describe('assistant-bridge doctor', () => {
  for (const form of ['a', 'b']) {
    it(`is all green against the emulator (Form ${form.toUpperCase()}) and exits 0`, async () => {
      // With a platform, as `start` needs (the fake Discord).
      const r = await doctor({
        CHAT_API_FORM: form,
        BOT_ROUTES: 'slack:T1=other-bot',
        DISCORD_BOT_TOKEN: discord.token,
        DISCORD_API_URL: discord.apiUrl,
      });
      expect(r.stdout).toMatch(/^CHECK\s+STATUS\s+DETAIL/);
      for (const check of [
        'config',
        'database',
        'upstream reachable',
        'upstream API key',
        'bot demo-bot',
        'bot other-bot',
      ]) {
        expect(r.row(check).status, check).toBe('ok');
      }
      expect(r.row('upstream reachable').text).toContain(`${emu.url} (Form ${form.toUpperCase()}) answered 200`);
      expect(r.stdout).toContain('0 failed');
      expect(r.code).toBe(0);
    });

    it(`fails on a wrong API key with a hint (Form ${form.toUpperCase()}) and exits 1`, async () => {
      const r = await doctor({ CHAT_API_FORM: form, CHAT_API_KEY: 'wrong-key' });
      expect(r.row('upstream reachable').status).toBe('ok');
      expect(r.row('upstream API key')).toEqual({
        status: 'FAIL',
        text: 'refused (401)  CHAT_API_KEY was refused (401): check the key',
      });
      expect(r.row('bot demo-bot').status).toBe('skip');
      expect(r.stdout).not.toContain('wrong-key');
      expect(r.code).toBe(1);
    });

    it(`fails on an unknown bot id (Form ${form.toUpperCase()}) and exits 1`, async () => {
      const r = await doctor({ CHAT_API_FORM: form, CHAT_BOT_ID: 'no-such-bot' });
      expect(r.row('upstream API key').status).toBe('ok');
      const bot = r.row('bot no-such-bot');
      expect(bot.status).toBe('FAIL');
      expect(bot.text).toContain(
        form === 'a' ? 'bot id unknown (404; CHAT_BOT_ID)' : 'bot id unknown (400 INVALID_BOT_ID; CHAT_BOT_ID)',
      );
      expect(bot.text).toContain('CHAT_BOT_ID names a bot the upstream does not know');
      expect(r.code).toBe(1);
    });
  }

  it('checks the Discord bot token against the fake Discord', async () => {
    const good = await doctor({ DISCORD_BOT_TOKEN: discord.token, DISCORD_API_URL: discord.apiUrl });
    expect(good.row('discord /users/@me')).toMatchObject({ status: 'ok' });
    expect(good.row('discord /users/@me').text).toContain(discord.botUser.id);
    expect(good.row('discord invite').text).toContain(`client_id=${discord.applicationId}`);

    const bad = await doctor({ DISCORD_BOT_TOKEN: 'not-the-token', DISCORD_API_URL: discord.apiUrl });
    expect(bad.row('discord /users/@me').status).toBe('FAIL');
    expect(bad.row('discord /users/@me').text).toContain('DISCORD_BOT_TOKEN was refused (401)');
    expect(bad.code).toBe(1);
  });

  it('checks the Slack tokens against the fake Slack', async () => {
    const base = { SLACK_API_URL: slack.apiUrl, SLACK_APP_TOKEN: slack.appToken };
    const good = await doctor({ ...base, SLACK_BOT_TOKEN: slack.botToken });
    expect(good.row('slack auth.test')).toEqual({ status: 'ok', text: `bot @bridge in Fake Team (${slack.teamId})` });
    expect(good.row('slack socket mode').status).toBe('ok');
    expect(good.code).toBe(0);

    const bad = await doctor({ ...base, SLACK_BOT_TOKEN: 'xoxb-not-the-token' });
    expect(bad.row('slack auth.test')).toEqual({
      status: 'FAIL',
      text: 'refused: invalid_auth  SLACK_BOT_TOKEN was refused (invalid_auth): check the token',
    });
    expect(bad.stdout).not.toContain('xoxb-not-the-token');
    expect(bad.code).toBe(1);

    // A bot token where the app-level token belongs: named before any request, one line.
    const swapped = await doctor({ ...base, SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: slack.botToken });
    expect(swapped.row('config').status).toBe('FAIL');
    expect(swapped.row('config').text).toContain('SLACK_APP_TOKEN holds a bot token (xoxb-)');
    expect(swapped.stdout).not.toContain(slack.botToken);
    expect(swapped.code).toBe(1);

    // One that is no known kind of Slack token: checked at Slack, with the shape named.
    const odd = await doctor({ ...base, SLACK_BOT_TOKEN: slack.botToken, SLACK_APP_TOKEN: 'not-an-app-token' });
    expect(odd.row('config').status).toBe('WARN');
    expect(odd.stdout).toContain('warning: SLACK_APP_TOKEN holds no known kind of Slack token');
    expect(odd.row('slack socket mode').status).toBe('FAIL');
    expect(odd.row('slack socket mode').text).toContain('(an app-level token starts with xapp-)');
  });

  it('prints the configuration problems and exits 1 on a malformed variable', async () => {
    const r = await doctor({ CHAT_API_FORM: 'c' });
    expect(r.row('config').status).toBe('FAIL');
    expect(r.row('config').text).toContain('CHAT_API_FORM');
    expect(r.row('upstream')).toEqual({ status: 'skip', text: 'configuration invalid' });
    expect(r.code).toBe(1);
  });

  it('refuses unknown arguments with exit 2', async () => {
    const r = await doctor({}, ['--frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown argument "--frobnicate"');
    expect(r.stdout).toBe('');
  });
});

describe('assistant-bridge doctor with everything configured', () => {
  it('is all green against the emulator, the fake Slack and the fake Discord, and exits 0', async () => {
    const r = await doctor({
      SLACK_API_URL: slack.apiUrl,
      SLACK_APP_TOKEN: slack.appToken,
      SLACK_BOT_TOKEN: slack.botToken,
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiUrl,
    });
    const rows = r.stdout
      .split('\n')
      .slice(2)
      .filter((l) => /\s{2}(ok|FAIL|skip)\s{2}/.test(l));
    expect(rows.length).toBeGreaterThan(8);
    expect(rows.filter((l) => !/\s{2}ok(\s{2}|$)/.test(l))).toEqual([]);
    expect(r.code).toBe(0);
  });
});
