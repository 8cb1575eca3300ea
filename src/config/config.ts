import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { parse as parseDotenv } from 'dotenv';
import { registerSecrets, scrubSecrets, secretValuesOf } from '../scrub.js';
import { type DiscordShards, resolveDiscordShards } from './discord-shards.js';
import { type EnvFile, findEnvFile, resolveDatabasePath } from './env-file.js';
import { parseTrustProxy, type TrustProxy } from './trust-proxy.js';
import { envSchema, type RawEnv } from './env-schema.js';
import { openAiFormSettings, type OpenAiFormSettings } from './openai-forms.js';
import { type BotRoute, parseBotRoutes, RouteParseError } from './routes.js';
import { slackTokenProblems } from './slack-tokens.js';
import { discordTokenProblems } from './discord-token.js';

// Stage 2 of configuration: the validated environment becomes the typed Config the parts use.
// Secrets stay in their own sub-objects so that logging a config section never shows one.

/** CHAT_API_FORM as configured; main.ts hands it to the upstream client (its ChatForm). */
export type ChatFormSetting = 'a' | 'b' | 'chat-completions' | 'responses';
export type SlackStreaming = 'auto' | 'edit' | 'native';
export type DiscordReplyMode = 'thread' | 'inline';
/** CONTEXT_MODE as configured; main.ts hands it to the core (its ContextMode). */
export type ContextModeSetting = 'message' | 'metadata' | 'off';

/** CONTEXT_*: the earlier messages a new conversation in a place gets (see docs/thread-context.md). */
export interface ContextConfig {
  mode: ContextModeSetting;
  maxMessages: number;
  maxChars: number;
}

export interface UpstreamConfig {
  url: string;
  apiKey: string;
  form: ChatFormSetting;
  botId: string;
  routes: BotRoute[];
  streaming: boolean;
  sessionIdleSeconds: number;
  maxMessageChars: number | undefined;
  context: ContextConfig;
  requestTimeoutMs: number;
  streamIdleTimeoutMs: number;
  /** CHAT_REPLY_MAX_SECONDS: the overall deadline of one reply. */
  maxReplySeconds: number;
  /** CHAT_REPLY_MAX_CHARS: the most upstream text one reply takes; the client stops reading beyond it. */
  maxReplyChars: number;
  /** REPLY_FILE_MAX_BYTES: the largest file an agent event carries inline; a larger one is named, not uploaded. */
  maxFileBytes: number;
  /** What only the OpenAI-compatible forms read (system prompt, extra fields, transcript bounds). */
  openAi: OpenAiFormSettings;
}

export interface SlackConfig {
  botToken: string | undefined;
  oauth: { clientId: string; clientSecret: string; stateSecret: string } | undefined;
  appToken: string | undefined;
  signingSecret: string | undefined;
  apiUrl: string;
  streaming: SlackStreaming;
  allowedTeams: string[];
  allowedChannels: string[];
  /** TRUST_PROXY: whose X-Forwarded-For names the client of an install link; unset: none. */
  trustProxy?: TrustProxy;
}

export interface DiscordConfig {
  botToken: string;
  apiUrl: string;
  replyMode: DiscordReplyMode;
  allowedGuilds: string[];
  allowedChannels: string[];
  /** DISCORD_SHARD_COUNT/DISCORD_SHARD_IDS; absent: the count Discord recommends, all shards. */
  shards?: DiscordShards;
}

export type { DiscordShards } from './discord-shards.js';

export interface ServiceConfig {
  port: number;
  host: string;
  databasePath: string;
  logLevel: string;
  /** LOG_FORMAT: `json` lines (for collectors) or `pretty` lines for a person; unset: pretty on a terminal. */
  logFormat: 'json' | 'pretty';
  maxConcurrentReplies: number;
  /** Messages that may wait for a slot; beyond it a busy notice. */
  maxQueuedReplies: number;
  userMessagesPerMinute: number;
  streamEditIntervalMs: number;
  /** ATTACHMENT_MAX_BYTES: the largest text-like file whose text is sent upstream. */
  attachmentMaxBytes: number;
  /** FEEDBACK: finished replies carry thumbs up/down. */
  feedback: boolean;
  /** SHOW_STEPS: an agent's steps (tool calls, searches) shown while they run. */
  showSteps: boolean;
  /** SHOW_SOURCES: the sources an answer cites, listed after it. */
  showSources: boolean;
  /** CONVERSATION_RETENTION_DAYS: a conversation mapping unused this long is deleted. */
  conversationRetentionDays: number;
  /** METRICS_PORT/METRICS_HOST: /metrics served there only (not on PORT); unset: on PORT. */
  metrics?: { host: string; port: number };
  /** TRUST_PROXY, as the Slack install bound reads it: set while HOST is every interface, a warning. */
  trustProxy?: TrustProxy;
}

/** DATABASE_URL: PostgreSQL instead of SQLite. The URL may hold a password: never log it. */
export interface PostgresConfig {
  url: string;
}

/** This replica in a database several replicas share. */
export interface ReplicaConfig {
  /** REPLICA_ID; default hostname and pid. */
  id: string;
  /** REPLICA_LEASE_SECONDS: a heartbeat older than this means the replica is gone. */
  leaseSeconds: number;
}

export interface Config {
  upstream: UpstreamConfig;
  slack: SlackConfig | undefined;
  discord: DiscordConfig | undefined;
  service: ServiceConfig;
  /** Set when DATABASE_URL is: PostgreSQL holds the data; unset: SQLite at service.databasePath. */
  postgres: PostgresConfig | undefined;
  replica: ReplicaConfig;
}

/** A configuration mistake: printed as its message (no stack), exit status 2. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Configuration error:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

/**
 * The process environment over a `.env` file (if present): real variables win, as with dotenv.
 * Without `dotenvPath`, the `.env` is found from the project folder (env-file.ts) and a relative
 * (or unset) DATABASE_PATH is made absolute against the same folder.
 */
export function readEnv(env: Env = process.env, dotenvPath?: string): Env {
  return readEnvFrom(env, dotenvPath).env;
}

/**
 * readEnv, which file it read (for the line `start` prints about it), and the names that file
 * set (to say where an unknown name came from: unknown-vars.ts).
 */
export function readEnvFrom(
  env: Env = process.env,
  dotenvPath?: string,
): { env: Env; file: EnvFile | undefined; fileNames: Set<string> } {
  const file = dotenvPath === undefined ? findEnvFile() : undefined;
  const path = dotenvPath ?? file?.path;
  let fromFile: Env = {};
  if (path !== undefined) {
    try {
      fromFile = parseDotenv(readFileSync(path));
    } catch {
      // no .env: fine
    }
  }
  const merged = { ...fromFile, ...env };
  if (file !== undefined) merged.DATABASE_PATH = resolveDatabasePath(merged.DATABASE_PATH, file.base);
  return { env: merged, file, fileNames: new Set(Object.keys(fromFile)) };
}

const REDACTED = new Set(['DATABASE_URL']);

export function parseRawEnv(env: Env): RawEnv {
  // First, before anything can fail: from here on every output path scrubs these values.
  registerSecrets(secretValuesOf(env));
  const result = envSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => {
      const name = String(i.path[0] ?? 'environment');
      // A database URL may carry a password: say what was wrong, not what was given.
      if (REDACTED.has(name)) return `${name}: ${i.message}`;
      return scrubSecrets(`${name}: ${i.message} (got ${JSON.stringify(env[name] ?? '')})`);
    });
    throw new ConfigError(problems);
  }
  return result.data;
}

export interface LoadOptions {
  /** Require at least one platform (Slack or Discord): `start` and `doctor`'s config row do, `chat` does not. */
  requirePlatform?: boolean;
  /** Require the upstream variables (CHAT_API_URL, CHAT_API_KEY, CHAT_BOT_ID). */
  requireUpstream?: boolean;
}

export function buildConfig(raw: RawEnv, opts: LoadOptions = {}): Config {
  const checked = checkEnv(raw, opts);
  if (checked.problems.length > 0) throw new ConfigError(checked.problems);
  const { trustProxy } = checked;
  return {
    upstream: upstreamConfig(raw, checked.routes, checked.openAi),
    slack: checked.slackEnabled ? slackConfig(raw, checked.slackOAuth, trustProxy) : undefined,
    discord: checked.discordEnabled ? discordConfig(raw, checked.shards) : undefined,
    service: serviceConfig(raw, trustProxy),
    postgres: raw.DATABASE_URL !== undefined ? { url: raw.DATABASE_URL } : undefined,
    replica: {
      id: raw.REPLICA_ID ?? `${hostname()}-${process.pid}`,
      leaseSeconds: raw.REPLICA_LEASE_SECONDS,
    },
  };
}

/** What checking the variables together found: every problem (in the order they are told), and the parsed parts. */
interface CheckedEnv {
  problems: string[];
  routes: BotRoute[];
  openAi: ReturnType<typeof openAiFormSettings>;
  shards: ReturnType<typeof resolveDiscordShards>;
  trustProxy: TrustProxyResult;
  slackEnabled: boolean;
  /** All three Slack OAuth variables are set. */
  slackOAuth: boolean;
  discordEnabled: boolean;
}

type TrustProxyResult = ReturnType<typeof parseTrustProxy>;

/** The checks that span several variables (each one alone was checked by the schema). */
function checkEnv(raw: RawEnv, opts: LoadOptions): CheckedEnv {
  const { requirePlatform = true, requireUpstream = true } = opts;
  const problems: string[] = [];

  let routes: BotRoute[] = [];
  try {
    routes = parseBotRoutes(raw.BOT_ROUTES);
  } catch (err) {
    if (err instanceof RouteParseError) problems.push(`BOT_ROUTES: ${err.message}`);
    else throw err;
  }

  if (requireUpstream) {
    const missing = (['CHAT_API_URL', 'CHAT_API_KEY', 'CHAT_BOT_ID'] as const).filter((k) => raw[k] === undefined);
    if (missing.length > 0) problems.push(`missing required variables: ${missing.join(', ')}`);
  }

  const oauthParts = [raw.SLACK_CLIENT_ID, raw.SLACK_CLIENT_SECRET, raw.SLACK_STATE_SECRET];
  const oauthSet = oauthParts.filter((v) => v !== undefined).length;
  if (oauthSet > 0 && oauthSet < 3) {
    problems.push(
      'Slack OAuth needs all of SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET (only some are set)',
    );
  }
  const slackEnabled = raw.SLACK_BOT_TOKEN !== undefined || oauthSet === 3;
  if (slackEnabled && raw.SLACK_APP_TOKEN === undefined && raw.SLACK_SIGNING_SECRET === undefined) {
    problems.push('SLACK_SIGNING_SECRET: required in Slack HTTP mode (set it, or set SLACK_APP_TOKEN for Socket Mode)');
  }
  problems.push(...slackTokenProblems(raw).problems);
  problems.push(...discordTokenProblems(raw).problems);
  const openAi = openAiFormSettings(raw, problems);
  const discordEnabled = raw.DISCORD_BOT_TOKEN !== undefined;
  const shards = resolveDiscordShards(raw.DISCORD_SHARD_COUNT, raw.DISCORD_SHARD_IDS);
  if (!shards.ok) problems.push(shards.problem);
  const trustProxy = parseTrustProxy(raw.TRUST_PROXY);
  if (!trustProxy.ok) problems.push(`TRUST_PROXY: ${trustProxy.message}`);
  if (raw.METRICS_HOST !== undefined && raw.METRICS_PORT === undefined)
    problems.push('METRICS_HOST: set METRICS_PORT too (METRICS_HOST names where that port listens)');
  if (requirePlatform && !slackEnabled && !discordEnabled) {
    problems.push(
      'no platform configured: set SLACK_BOT_TOKEN (or SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET) for Slack, and/or DISCORD_BOT_TOKEN for Discord',
    );
  }
  return { problems, routes, openAi, shards, trustProxy, slackEnabled, slackOAuth: oauthSet === 3, discordEnabled };
}

function upstreamConfig(raw: RawEnv, routes: BotRoute[], openAi: CheckedEnv['openAi']): Config['upstream'] {
  return {
    url: raw.CHAT_API_URL ?? '',
    apiKey: raw.CHAT_API_KEY ?? '',
    form: raw.CHAT_API_FORM,
    botId: raw.CHAT_BOT_ID ?? '',
    routes,
    streaming: raw.CHAT_STREAMING === 'on',
    sessionIdleSeconds: raw.CHAT_SESSION_IDLE_SECONDS,
    maxMessageChars: raw.CHAT_MAX_MESSAGE_CHARS,
    context: {
      mode: raw.CONTEXT_MODE,
      maxMessages: raw.CONTEXT_MAX_MESSAGES,
      maxChars: raw.CONTEXT_MAX_CHARS,
    },
    requestTimeoutMs: raw.CHAT_REQUEST_TIMEOUT_MS,
    streamIdleTimeoutMs: raw.CHAT_STREAM_IDLE_TIMEOUT_MS,
    maxReplySeconds: raw.CHAT_REPLY_MAX_SECONDS,
    maxReplyChars: raw.CHAT_REPLY_MAX_CHARS,
    maxFileBytes: raw.REPLY_FILE_MAX_BYTES,
    openAi,
  };
}

function slackConfig(raw: RawEnv, oauth: boolean, trustProxy: TrustProxyResult): NonNullable<Config['slack']> {
  return {
    botToken: raw.SLACK_BOT_TOKEN,
    oauth: oauth
      ? {
          clientId: raw.SLACK_CLIENT_ID as string,
          clientSecret: raw.SLACK_CLIENT_SECRET as string,
          stateSecret: raw.SLACK_STATE_SECRET as string,
        }
      : undefined,
    appToken: raw.SLACK_APP_TOKEN,
    signingSecret: raw.SLACK_SIGNING_SECRET,
    apiUrl: withTrailingSlash(raw.SLACK_API_URL ?? 'https://slack.com/api/'),
    streaming: raw.SLACK_STREAMING,
    allowedTeams: raw.SLACK_ALLOWED_TEAMS,
    allowedChannels: raw.SLACK_ALLOWED_CHANNELS,
    ...(trustProxy.ok && trustProxy.value !== undefined ? { trustProxy: trustProxy.value } : {}),
  };
}

function discordConfig(raw: RawEnv, shards: CheckedEnv['shards']): NonNullable<Config['discord']> {
  return {
    botToken: raw.DISCORD_BOT_TOKEN as string,
    apiUrl: (raw.DISCORD_API_URL ?? 'https://discord.com/api').replace(/\/+$/, ''),
    replyMode: raw.DISCORD_REPLY_MODE,
    allowedGuilds: raw.DISCORD_ALLOWED_GUILDS,
    allowedChannels: raw.DISCORD_ALLOWED_CHANNELS,
    ...(shards.ok && shards.shards !== undefined ? { shards: shards.shards } : {}),
  };
}

function serviceConfig(raw: RawEnv, trustProxy: TrustProxyResult): Config['service'] {
  return {
    port: raw.PORT,
    host: raw.HOST,
    databasePath: raw.DATABASE_PATH,
    logLevel: raw.LOG_LEVEL,
    logFormat: raw.LOG_FORMAT === 'auto' ? defaultLogFormat() : raw.LOG_FORMAT,
    maxConcurrentReplies: raw.MAX_CONCURRENT_REPLIES,
    maxQueuedReplies: raw.MAX_QUEUED_REPLIES,
    userMessagesPerMinute: raw.USER_MESSAGES_PER_MINUTE,
    streamEditIntervalMs: raw.STREAM_EDIT_INTERVAL_MS,
    attachmentMaxBytes: raw.ATTACHMENT_MAX_BYTES,
    feedback: raw.FEEDBACK === 'on',
    showSteps: raw.SHOW_STEPS === 'on',
    showSources: raw.SHOW_SOURCES === 'on',
    conversationRetentionDays: raw.CONVERSATION_RETENTION_DAYS,
    ...(raw.METRICS_PORT !== undefined
      ? { metrics: { host: raw.METRICS_HOST ?? '127.0.0.1', port: raw.METRICS_PORT } }
      : {}),
    ...(trustProxy.ok && trustProxy.value !== undefined ? { trustProxy: trustProxy.value } : {}),
  };
}

/** LOG_FORMAT unset: readable lines for a person at a terminal, JSON for a pipe or a collector. */
export function defaultLogFormat(isTTY = process.stdout.isTTY === true): 'json' | 'pretty' {
  return isTTY ? 'pretty' : 'json';
}

const withTrailingSlash = (u: string) => (u.endsWith('/') ? u : `${u}/`);

/** Read, validate and type the configuration in one call. Throws ConfigError. */
export function loadConfig(env: Env = readEnv(), opts: LoadOptions = {}): Config {
  return buildConfig(parseRawEnv(env), opts);
}
