import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildConfig, ConfigError, loadConfig, parseRawEnv } from './config.js';
import { parseBotRoutes } from './routes.js';

const base = { CHAT_API_URL: 'http://127.0.0.1:8787', CHAT_API_KEY: 'k', CHAT_BOT_ID: 'demo-bot' };

describe('config', () => {
  it('applies the contract defaults', () => {
    const c = loadConfig({ ...base, DISCORD_BOT_TOKEN: 'x' });
    expect(c.upstream).toMatchObject({
      form: 'a',
      streaming: true,
      sessionIdleSeconds: 86400,
      maxMessageChars: undefined,
      requestTimeoutMs: 30000,
      streamIdleTimeoutMs: 60000,
      maxReplySeconds: 300,
      maxReplyChars: 40000,
      maxFileBytes: 8388608,
      routes: [],
      context: { mode: 'message', maxMessages: 30, maxChars: 6000 },
    });
    expect(c.service).toEqual({
      port: 3000,
      host: '0.0.0.0',
      databasePath: './data/bridge.db',
      logLevel: 'info',
      logFormat: process.stdout.isTTY === true ? 'pretty' : 'json',
      maxConcurrentReplies: 64,
      maxQueuedReplies: 256,
      userMessagesPerMinute: 20,
      streamEditIntervalMs: 1000,
      attachmentMaxBytes: 200_000,
      feedback: true,
      showSteps: true,
      showSources: true,
      conversationRetentionDays: 90,
    });
    expect(c.discord).toMatchObject({ apiUrl: 'https://discord.com/api', replyMode: 'thread', allowedGuilds: [] });
    expect(c.slack).toBeUndefined();
  });

  it('enables Slack by bot token or by the OAuth trio, and needs a signing secret in HTTP mode', () => {
    expect(loadConfig({ ...base, SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1' }).slack?.apiUrl).toBe(
      'https://slack.com/api/',
    );
    expect(() => loadConfig({ ...base, SLACK_BOT_TOKEN: 'xoxb-1' })).toThrow(/SLACK_SIGNING_SECRET/);
    const oauth = loadConfig({
      ...base,
      SLACK_CLIENT_ID: 'a',
      SLACK_CLIENT_SECRET: 'b',
      SLACK_STATE_SECRET: 'c',
      SLACK_SIGNING_SECRET: 's',
      SLACK_API_URL: 'http://127.0.0.1:9/api',
      SLACK_ALLOWED_CHANNELS: ' C1, C2 ,,',
    });
    expect(oauth.slack?.oauth).toEqual({ clientId: 'a', clientSecret: 'b', stateSecret: 'c' });
    expect(oauth.slack?.apiUrl).toBe('http://127.0.0.1:9/api/');
    expect(oauth.slack?.allowedChannels).toEqual(['C1', 'C2']);
    expect(() => loadConfig({ ...base, SLACK_CLIENT_ID: 'a', SLACK_SIGNING_SECRET: 's' })).toThrow(/OAuth needs all/);
  });

  it('names the missing variables when no platform is configured', () => {
    try {
      loadConfig({});
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const msg = (err as Error).message;
      expect(msg).toContain('CHAT_API_URL');
      expect(msg).toContain('CHAT_API_KEY');
      expect(msg).toContain('CHAT_BOT_ID');
      expect(msg).toContain('SLACK_BOT_TOKEN');
      expect(msg).toContain('DISCORD_BOT_TOKEN');
    }
    expect(loadConfig(base, { requirePlatform: false }).slack).toBeUndefined();
  });

  it.each([
    ['PORT', 'eighty', /PORT: must be a whole number/],
    ['PORT', '70000', /PORT: must be at most 65535/],
    ['CHAT_API_FORM', 'c', /CHAT_API_FORM: must be one of: a, b, chat-completions, responses/],
    ['SLACK_STREAMING', 'fast', /SLACK_STREAMING/],
    ['DISCORD_REPLY_MODE', 'dm', /DISCORD_REPLY_MODE/],
    ['CHAT_API_URL', 'not a url', /CHAT_API_URL: must be an http\(s\) URL/],
    ['MAX_CONCURRENT_REPLIES', '0', /MAX_CONCURRENT_REPLIES: must be at least 1/],
    ['STREAM_EDIT_INTERVAL_MS', '-5', /STREAM_EDIT_INTERVAL_MS/],
    ['CHAT_MAX_MESSAGE_CHARS', '1.5', /CHAT_MAX_MESSAGE_CHARS/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL/],
    ['CHAT_REPLY_MAX_CHARS', '0', /CHAT_REPLY_MAX_CHARS: must be at least 1/],
    ['CHAT_REPLY_MAX_CHARS', '40k', /CHAT_REPLY_MAX_CHARS: must be a whole number/],
    ['CHAT_REPLY_MAX_SECONDS', '-1', /CHAT_REPLY_MAX_SECONDS/],
    ['BOT_ROUTES', 'slack:T1', /BOT_ROUTES/],
    ['CONTEXT_MODE', 'transcript', /CONTEXT_MODE: must be one of: message, metadata, off/],
    ['FEEDBACK', 'yes', /FEEDBACK: must be one of: on, off/],
    ['CONTEXT_MAX_MESSAGES', 'many', /CONTEXT_MAX_MESSAGES: must be a whole number/],
    ['CONTEXT_MAX_CHARS', '-1', /CONTEXT_MAX_CHARS/],
    ['REPLY_FILE_MAX_BYTES', '0', /REPLY_FILE_MAX_BYTES: must be at least 1/],
  ])('stops on a malformed %s naming it', (name, value, pattern) => {
    expect(() => loadConfig({ ...base, DISCORD_BOT_TOKEN: 'x', [name]: value })).toThrow(pattern);
  });

  it('accepts case and whitespace in modes', () => {
    const c = loadConfig({ ...base, DISCORD_BOT_TOKEN: 'x', CHAT_API_FORM: ' B ', CHAT_STREAMING: 'OFF' });
    expect(c.upstream.form).toBe('b');
    expect(c.upstream.streaming).toBe(false);
  });

  it('reads the reply caps', () => {
    const c = loadConfig({
      ...base,
      DISCORD_BOT_TOKEN: 'x',
      CHAT_REPLY_MAX_CHARS: ' 1000 ',
      CHAT_REPLY_MAX_SECONDS: '30',
      REPLY_FILE_MAX_BYTES: '1024',
    });
    expect(c.upstream).toMatchObject({ maxReplyChars: 1000, maxReplySeconds: 30, maxFileBytes: 1024 });
  });

  it('never crashes on a random environment: it builds a config or names a variable', () => {
    const names = Object.keys(parseRawEnv({}));
    const value = fc.oneof(
      fc.string(),
      fc.constantFrom('', '0', '1', '-1', '99999999999999999999', 'on', 'off', 'a', 'b', 'http://x', 'slack:T=b'),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...names), value), (env) => {
        try {
          buildConfig(parseRawEnv(env), { requirePlatform: false, requireUpstream: false });
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
          for (const p of (err as ConfigError).problems) expect(names.some((n) => p.includes(n))).toBe(true);
        }
      }),
      { numRuns: 300, seed: 42 },
    );
  });
});

describe('BOT_ROUTES', () => {
  // Which route wins for a place is the core's botRouter (src/core/place.test.ts).
  it('parses workspace and channel routes, platform in any case', () => {
    expect(parseBotRoutes('slack:T1=bot1, SLACK:T1/C2=bot2,discord:G1/C4=bot4')).toEqual([
      { platform: 'slack', workspaceId: 'T1', botId: 'bot1' },
      { platform: 'slack', workspaceId: 'T1', channelId: 'C2', botId: 'bot2' },
      { platform: 'discord', workspaceId: 'G1', channelId: 'C4', botId: 'bot4' },
    ]);
  });
});

describe('config: DATABASE_URL and replicas', () => {
  const env = { ...base, DISCORD_BOT_TOKEN: 'x' };

  it('uses SQLite unless DATABASE_URL names PostgreSQL, and names this replica', () => {
    const c = loadConfig(env);
    expect(c.postgres).toBeUndefined();
    expect(c.replica).toEqual({ id: expect.stringMatching(new RegExp(`-${process.pid}$`)), leaseSeconds: 15 });
    for (const url of ['postgres://u:p@db:5432/bridge', 'postgresql://db/bridge?sslmode=require']) {
      expect(loadConfig({ ...env, DATABASE_URL: url }).postgres).toEqual({ url });
    }
    expect(loadConfig({ ...env, DATABASE_URL: ' ', REPLICA_ID: 'web-1', REPLICA_LEASE_SECONDS: '30' })).toMatchObject({
      postgres: undefined,
      replica: { id: 'web-1', leaseSeconds: 30 },
    });
  });

  it('says what is wrong in a DATABASE_URL (the port, the password encoding) without echoing it', () => {
    const cases: [string, RegExp][] = [
      [
        'postgres://u:hunter2@db:99999/bridge',
        /DATABASE_URL: has a bad port: it must be a whole number from 1 to 65535/,
      ],
      ['postgres://u:hunter2@db:54x2/bridge', /DATABASE_URL: has a bad port/],
      ['postgres://u:hun#ter2@db:5432/bridge', /DATABASE_URL: is not a valid URL \(in the user name and password, /],
    ];
    for (const [url, expected] of cases) {
      let message = '';
      try {
        loadConfig({ ...env, DATABASE_URL: url });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(expected);
      expect(message).not.toContain('hunter2');
    }
  });

  it('states the range of a negative number instead of "not a whole number"', () => {
    expect(() => loadConfig({ ...env, PORT: '-1' })).toThrow(/PORT: must be a whole number from 0 to 65535/);
    expect(() => loadConfig({ ...env, MAX_CONCURRENT_REPLIES: '-5' })).toThrow(
      /MAX_CONCURRENT_REPLIES: must be a whole number, at least 1/,
    );
  });

  it('refuses another scheme by name, without echoing the URL (it may hold a password)', () => {
    for (const url of ['mysql://u:hunter2@db/x', 'sqlite:./x.db', 'postgres://', 'hunter2']) {
      let message = '';
      try {
        loadConfig({ ...env, DATABASE_URL: url });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        message = (err as Error).message;
      }
      expect(message).toMatch(/DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/);
      expect(message).not.toContain('hunter2');
    }
    expect(() => loadConfig({ ...env, REPLICA_LEASE_SECONDS: '0' })).toThrow(
      /REPLICA_LEASE_SECONDS: must be at least 1/,
    );
  });
});

describe('config: Discord sharding', () => {
  const env = { ...base, DISCORD_BOT_TOKEN: 'x' };
  const problemsOf = (extra: Record<string, string>): string => {
    try {
      loadConfig({ ...env, ...extra });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    return expect.unreachable('no configuration error');
  };

  it("leaves the count to Discord's recommendation and runs every shard by default", () => {
    expect(loadConfig(env).discord?.shards).toBeUndefined();
    expect(loadConfig({ ...env, DISCORD_SHARD_COUNT: ' ', DISCORD_SHARD_IDS: '' }).discord?.shards).toBeUndefined();
  });

  it('runs all shards of a given count, or the listed ones', () => {
    expect(loadConfig({ ...env, DISCORD_SHARD_COUNT: '3' }).discord?.shards).toEqual({ count: 3, ids: [0, 1, 2] });
    expect(loadConfig({ ...env, DISCORD_SHARD_COUNT: '4', DISCORD_SHARD_IDS: ' 3, 1 ,' }).discord?.shards).toEqual({
      count: 4,
      ids: [1, 3],
    });
    expect(loadConfig({ ...env, DISCORD_SHARD_COUNT: '1', DISCORD_SHARD_IDS: '0' }).discord?.shards).toEqual({
      count: 1,
      ids: [0],
    });
  });

  it.each([
    [{ DISCORD_SHARD_COUNT: '0' }, /DISCORD_SHARD_COUNT: must be at least 1/],
    [{ DISCORD_SHARD_COUNT: 'two' }, /DISCORD_SHARD_COUNT: must be a whole number/],
    [{ DISCORD_SHARD_COUNT: '-2' }, /DISCORD_SHARD_COUNT: must be a whole number/],
    [{ DISCORD_SHARD_COUNT: '1000000' }, /DISCORD_SHARD_COUNT: must be at most 100000/],
    [
      { DISCORD_SHARD_COUNT: '2', DISCORD_SHARD_IDS: '0,x' },
      /DISCORD_SHARD_IDS: must be a comma list of shard ids.*"x"/,
    ],
    [{ DISCORD_SHARD_COUNT: '2', DISCORD_SHARD_IDS: '-1' }, /DISCORD_SHARD_IDS: must be a comma list/],
    [{ DISCORD_SHARD_COUNT: '2', DISCORD_SHARD_IDS: '1.5' }, /DISCORD_SHARD_IDS: must be a comma list/],
    [{ DISCORD_SHARD_COUNT: '2', DISCORD_SHARD_IDS: ',' }, /DISCORD_SHARD_IDS: must name at least one shard id/],
    [{ DISCORD_SHARD_COUNT: '4', DISCORD_SHARD_IDS: '1,2,1' }, /DISCORD_SHARD_IDS: names shard 1 more than once/],
    [
      { DISCORD_SHARD_COUNT: '2', DISCORD_SHARD_IDS: '0,2,5' },
      /DISCORD_SHARD_IDS: shard ids must be below DISCORD_SHARD_COUNT \(2\).*got 2, 5/,
    ],
    [{ DISCORD_SHARD_IDS: '0' }, /DISCORD_SHARD_IDS: needs DISCORD_SHARD_COUNT/],
  ])('refuses %o with a message naming the variable', (extra, pattern) => {
    expect(problemsOf(extra)).toMatch(pattern);
  });
});
