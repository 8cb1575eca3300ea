import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runChecks } from './index.js';
import type { CheckRow } from './types.js';

// The checks against tiny loopback stubs of the upstream, Slack's Web API and Discord's REST API.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const servers: Server[] = [];
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'doctor-'));
});
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  rmSync(dir, { recursive: true, force: true });
});

async function stub(handler: Handler): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
};

/** Form A upstream that knows `demo-bot` and the key `dev-key`. */
const upstream: Handler = (req, res) => {
  if (req.headers.authorization !== 'Bearer dev-key') return json(res, 401, { success: false, error: 'bad key' });
  if (req.url?.startsWith('/api/v1/chat/demo-bot/conversations')) {
    return json(res, 200, {
      success: true,
      data: { conversations: [], pagination: { page: 1, limit: 1, total: 2, hasMore: true } },
    });
  }
  json(res, 404, { success: false, error: 'Bot not found' });
};

const slackApi =
  (
    scopes = 'app_mentions:read,chat:write,im:history,channels:history,groups:history,mpim:history,files:read,users:read',
  ): Handler =>
  (req, res) => {
    const token = req.headers.authorization;
    if (req.url === '/api/auth.test') {
      if (token !== 'Bearer xoxb-good') return json(res, 200, { ok: false, error: 'invalid_auth' });
      return json(
        res,
        200,
        { ok: true, team: 'Acme', team_id: 'T1', user: 'bridge', bot_id: 'B1' },
        { 'x-oauth-scopes': scopes },
      );
    }
    if (req.url === '/api/apps.connections.open') {
      if (token !== 'Bearer xapp-good') return json(res, 200, { ok: false, error: 'invalid_auth' });
      return json(res, 200, { ok: true, url: 'wss://example.invalid/link' });
    }
    json(res, 404, { ok: false, error: 'unknown_method' });
  };

const discordApi =
  (flags: number): Handler =>
  (req, res) => {
    if (req.headers.authorization !== 'Bot good-token')
      return json(res, 401, { message: '401: Unauthorized', code: 0 });
    if (req.url === '/api/v10/users/@me') return json(res, 200, { id: '42', username: 'bridge', bot: true });
    if (req.url === '/api/v10/applications/@me') return json(res, 200, { id: '4242', flags });
    json(res, 404, { message: 'Unknown', code: 0 });
  };

async function baseEnv() {
  return {
    CHAT_API_URL: await stub(upstream),
    CHAT_API_KEY: 'dev-key',
    CHAT_BOT_ID: 'demo-bot',
    DATABASE_PATH: join(dir, 'data', 'bridge.db'),
  };
}

const row = (rows: CheckRow[], check: string) => {
  const r = rows.find((x) => x.check === check);
  if (!r) throw new Error(`no row ${check} in ${rows.map((x) => x.check).join(', ')}`);
  return r;
};

describe('doctor checks', () => {
  it('an upstream-only setup: the config row passes as start would (the playground runs), the rest too', async () => {
    const rows = await runChecks(await baseEnv());
    expect(row(rows, 'config').detail).toMatch(/no platform yet; the playground at \/ \(CHAT_API_URL\)$/);
    expect(rows.map((r) => [r.check, r.status])).toEqual([
      ['config', 'ok'],
      ['database', 'ok'],
      ['playground', 'ok'],
      ['upstream reachable', 'ok'],
      ['upstream API key', 'ok'],
      ['bot demo-bot', 'ok'],
      ['slack', 'skip'],
      ['discord', 'skip'],
    ]);
    // doctor creates nothing: the database is for start to create.
    expect(row(rows, 'database').detail).toMatch(/data\/bridge\.db: does not exist yet; start will create it/);
    expect(existsSync(join(dir, 'data'))).toBe(false);
    expect(row(rows, 'bot demo-bot').detail).toBe('known (CHAT_BOT_ID), 2 conversations');
  });

  it('nothing configured: passes as start would run, the playground on the built-in emulator', async () => {
    const rows = await runChecks({ DATABASE_PATH: join(dir, 'data', 'bridge.db') });
    expect(rows.map((r) => [r.check, r.status])).toEqual([
      ['config', 'ok'],
      ['database', 'ok'],
      ['playground', 'ok'],
      ['upstream', 'ok'],
      ['slack', 'skip'],
      ['discord', 'skip'],
    ]);
    expect(row(rows, 'config').detail).toMatch(/the playground at \/ \(built-in emulator\)$/);
    expect(row(rows, 'playground').detail).toBe(
      'http://127.0.0.1:3000/ (this machine only; the built-in emulator answers)',
    );
    expect(row(rows, 'upstream').detail).toMatch(
      /^none configured \(no CHAT_API_URL\): start runs the built-in emulator, which answered/,
    );
  });

  it('a misspelt variable (CHAT_API_BASE_URL) is a WARN row naming the likely meant one, not "all ok"', async () => {
    const rows = await runChecks(
      { DATABASE_PATH: join(dir, 'data', 'bridge.db'), CHAT_API_BASE_URL: 'http://127.0.0.1:1/' },
      { envFileNames: new Set(['CHAT_API_BASE_URL']) },
    );
    expect(rows.map((r) => [r.check, r.status]).slice(0, 2)).toEqual([
      ['config', 'ok'],
      ['config names', 'WARN'],
    ]);
    expect(row(rows, 'config names').detail).toBe(
      'CHAT_API_BASE_URL in .env is not a variable the bridge reads and is ignored: did you mean CHAT_API_URL?',
    );
    // Without the fix the run is on the built-in emulator, and the rows say so.
    expect(row(rows, 'config').detail).toMatch(/built-in emulator/);
  });

  it('PLAYGROUND=off with nothing configured fails as start would (no platform, no upstream)', async () => {
    const rows = await runChecks({ PLAYGROUND: 'off', DATABASE_PATH: join(dir, 'bridge.db') });
    expect(rows[0]).toMatchObject({ check: 'config', status: 'FAIL' });
    expect(rows[0]?.detail).toContain('no platform configured');
    expect(rows.some((r) => r.check === 'playground')).toBe(false);
  });

  it('fails the config row with every problem and skips the rest', async () => {
    const rows = await runChecks({ CHAT_API_URL: 'not a url', PORT: 'abc' });
    expect(rows[0]).toMatchObject({ check: 'config', status: 'FAIL' });
    expect(rows[0]?.detail).toContain('CHAT_API_URL');
    expect(rows[0]?.detail).toContain('PORT');
    expect(rows.slice(1).every((r) => r.status === 'skip')).toBe(true);
  });

  it('fails the database row when the folder cannot be made', async () => {
    writeFileSync(join(dir, 'file'), 'x');
    const rows = await runChecks({ ...(await baseEnv()), DATABASE_PATH: join(dir, 'file', 'sub', 'bridge.db') });
    expect(row(rows, 'database')).toMatchObject({ status: 'FAIL' });
    expect(row(rows, 'database').detail).toMatch(/ENOTDIR|EEXIST/);
    expect(row(rows, 'database').hint).toMatch(/DATABASE_PATH/);
  });

  it('checks every bot of BOT_ROUTES and names the route of an unknown one', async () => {
    const rows = await runChecks({ ...(await baseEnv()), BOT_ROUTES: 'slack:T1=demo-bot,discord:G1/C4=ghost' });
    expect(row(rows, 'bot demo-bot').status).toBe('ok');
    expect(row(rows, 'bot ghost')).toMatchObject({ status: 'FAIL' });
    expect(row(rows, 'bot ghost').detail).toBe('bot id unknown (404; BOT_ROUTES discord:G1/C4)');
    expect(row(rows, 'bot ghost').hint).toMatch(/^BOT_ROUTES names a bot the upstream does not know/);
  });

  it('CHAT_API_URL ending in /api/v1: the URL is blamed (the prefix twice), not the bot id', async () => {
    const env = await baseEnv();
    const rows = await runChecks({ ...env, CHAT_API_URL: `${env.CHAT_API_URL}/api/v1/` });
    expect(rows.map((r) => [r.check, r.status])).toContainEqual(['upstream URL', 'FAIL']);
    expect(row(rows, 'upstream URL').detail).toMatch(
      /answered 404 at http:.*\/api\/v1\/api\/v1\/chat\/demo-bot\/conversations$/,
    );
    expect(row(rows, 'upstream URL').hint).toBe(
      `CHAT_API_URL ends in /api/v1, but the bridge adds /api/v1/chat/… itself (Form A): set CHAT_API_URL=${env.CHAT_API_URL}`,
    );
    expect(row(rows, 'bot demo-bot')).toMatchObject({ status: 'skip', detail: 'CHAT_API_URL to fix first' });
  });

  it('reports an unreachable upstream and one that does not answer in time', async () => {
    const closed = await stub(() => {});
    const s = servers.pop()!;
    await new Promise((r) => s.close(r));
    let rows = await runChecks({ ...(await baseEnv()), CHAT_API_URL: closed });
    expect(row(rows, 'upstream reachable')).toMatchObject({ status: 'FAIL' });
    expect(row(rows, 'upstream reachable').detail).toContain('connection refused (ECONNREFUSED)');
    expect(row(rows, 'upstream API key').status).toBe('skip');
    // The playground row does not contradict it ("CHAT_API_URL answers" above a refused connection).
    expect(row(rows, 'playground')).toMatchObject({ status: 'FAIL' });
    expect(row(rows, 'playground').detail).toMatch(
      /\(this machine only; CHAT_API_URL does not answer as it should: see upstream reachable\)$/,
    );

    const silent = await stub(() => {}); // accepts, never answers
    rows = await runChecks({ ...(await baseEnv()), CHAT_API_URL: silent }, { timeoutMs: 200 });
    expect(row(rows, 'upstream reachable').detail).toContain('no answer within 200 ms');
  });

  it('checks Slack: auth.test, scopes, Socket Mode app token', async () => {
    const api = `${await stub(slackApi())}/api/`;
    let rows = await runChecks({
      ...(await baseEnv()),
      SLACK_BOT_TOKEN: 'xoxb-good',
      SLACK_APP_TOKEN: 'xapp-good',
      SLACK_API_URL: api,
    });
    expect(row(rows, 'slack auth.test')).toMatchObject({ status: 'ok', detail: 'bot @bridge in Acme (T1)' });
    expect(row(rows, 'slack scopes').status).toBe('ok');
    expect(row(rows, 'slack socket mode').status).toBe('ok');

    rows = await runChecks({
      ...(await baseEnv()),
      SLACK_BOT_TOKEN: 'xoxb-bad',
      SLACK_APP_TOKEN: 'not-an-app-token',
      SLACK_API_URL: api,
    });
    expect(row(rows, 'slack auth.test')).toMatchObject({
      status: 'FAIL',
      hint: 'SLACK_BOT_TOKEN was refused (invalid_auth): check the token',
    });
    expect(row(rows, 'slack socket mode').hint).toMatch(
      /^SLACK_APP_TOKEN was refused \(invalid_auth\).*starts with xapp-/,
    );
  });

  it('names missing Slack scopes, and checks the signing secret in HTTP mode', async () => {
    const api = `${await stub(slackApi('chat:write,app_mentions:read'))}/api/`;
    const rows = await runChecks({
      ...(await baseEnv()),
      SLACK_BOT_TOKEN: 'xoxb-good',
      SLACK_SIGNING_SECRET: 's3cret',
      SLACK_API_URL: api,
    });
    expect(row(rows, 'slack scopes')).toMatchObject({
      status: 'FAIL',
      detail: 'missing: im:history, channels:history, groups:history, mpim:history, files:read',
    });
    expect(row(rows, 'slack HTTP mode').status).toBe('ok');
  });

  it('checks Discord: token, Message Content intent, invite URL', async () => {
    let api = `${await stub(discordApi(1 << 19))}/api`;
    let rows = await runChecks({ ...(await baseEnv()), DISCORD_BOT_TOKEN: 'good-token', DISCORD_API_URL: api });
    expect(row(rows, 'discord /users/@me')).toMatchObject({ status: 'ok', detail: 'bot @bridge (42)' });
    expect(row(rows, 'discord message content').status).toBe('ok');
    // View Channels, Send Messages, Read Message History, Create Public Threads, Send Messages in Threads
    expect(row(rows, 'discord invite').detail).toBe(
      'https://discord.com/oauth2/authorize?client_id=4242&scope=bot+applications.commands&permissions=309237713920',
    );

    api = `${await stub(discordApi(0))}/api`;
    rows = await runChecks({ ...(await baseEnv()), DISCORD_BOT_TOKEN: 'good-token', DISCORD_API_URL: api });
    expect(row(rows, 'discord message content')).toMatchObject({ status: 'FAIL' });
    expect(row(rows, 'discord message content').hint).toMatch(/Message Content Intent/);

    rows = await runChecks({ ...(await baseEnv()), DISCORD_BOT_TOKEN: 'wrong', DISCORD_API_URL: api });
    expect(row(rows, 'discord /users/@me')).toMatchObject({ status: 'FAIL' });
    expect(row(rows, 'discord /users/@me').hint).toMatch(/^DISCORD_BOT_TOKEN was refused \(401\)/);
  });

  it('never puts a secret into a row', async () => {
    const api = `${await stub(slackApi())}/api/`;
    const rows = await runChecks({
      ...(await baseEnv()),
      CHAT_API_KEY: 'wrong-key-123',
      SLACK_BOT_TOKEN: 'xoxb-bad-456',
      SLACK_SIGNING_SECRET: 'signing-789',
      SLACK_API_URL: api,
    });
    const text = JSON.stringify(rows);
    for (const secret of ['wrong-key-123', 'xoxb-bad-456', 'signing-789']) expect(text).not.toContain(secret);
  });
});
