import { z } from 'zod';

// Stage 1 of configuration: the raw environment, variable by variable, validated with zod.
// Every configuration variable is here and nowhere else; .env.example documents each one (a test
// checks) and their names are fixed: operators' files depend on them.

const emptyToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

const optionalString = z.preprocess(emptyToUndefined, z.string().trim().optional());

// Not a number (or negative, as PORT=-1): the message states the range, not only "whole number".
const rangeText = (min: number, max: number) =>
  max === Number.MAX_SAFE_INTEGER ? `, at least ${min}` : ` from ${min} to ${max}`;

const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, { message: `must be a whole number${rangeText(min, max)}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(min, { message: `must be at least ${min}` })
        .max(max, { message: `must be at most ${max}` }),
    );

const intVar = (def: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess((v) => emptyToUndefined(v) ?? String(def), wholeNumber(min, max));

const optionalInt = (min: number) =>
  z.preprocess(emptyToUndefined, wholeNumber(min, Number.MAX_SAFE_INTEGER).optional());

const enumVar = <const T extends readonly [string, ...string[]]>(values: T, def: T[number]) =>
  z.preprocess(
    (v) => (typeof v === 'string' && v.trim() !== '' ? v.trim().toLowerCase() : def),
    z.enum(values, { message: `must be one of: ${values.join(', ')}` }),
  );

const urlVar = (def?: string) =>
  z.preprocess(
    (v) => emptyToUndefined(v) ?? def,
    z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
  );

// DATABASE_URL holds a password: its checks never echo it (parseRawEnv redacts it too); they say
// which part is wrong (the scheme, the port), never the value.
const postgresUrlProblem = (v: string): string | undefined => {
  const scheme = /^postgres(ql)?:\/\//i.exec(v);
  if (!scheme) return 'must be a postgres:// or postgresql:// URL';
  // host[:port] is what follows the last @ (a password may hold an unencoded @), up to the path.
  const rest = v.slice(scheme[0].length);
  const hostPort = rest.slice(rest.lastIndexOf('@') + 1).split(/[/?]/, 1)[0] ?? '';
  const host = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(hostPort);
  if (!host?.[1])
    return 'must be a postgres:// or postgresql:// URL with a host: postgres://user:password@host:5432/db';
  const port = host[2];
  if (port !== undefined && port !== '' && (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65_535))
    return 'has a bad port: it must be a whole number from 1 to 65535';
  if (!URL.canParse(v))
    return 'is not a valid URL (in the user name and password, characters such as @ : / # ? must be percent-encoded)';
  return undefined;
};

const postgresUrlVar = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .trim()
    .superRefine((v, ctx) => {
      const problem = postgresUrlProblem(v);
      if (problem !== undefined)
        ctx.addIssue({ code: 'custom', message: `${problem} (unset it to use SQLite at DATABASE_PATH)` });
    })
    .optional(),
);

const listVar = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    ),
);

// DISCORD_SHARD_IDS: whole numbers, each once. Whether they fit DISCORD_SHARD_COUNT is checked in
// buildConfig, where both variables are known.
const shardIdsVar = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      const parts = v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
      if (parts.length === 0) {
        ctx.addIssue({ code: 'custom', message: 'must name at least one shard id (unset it to run all shards)' });
        return z.NEVER;
      }
      const bad = parts.filter((s) => !/^\d+$/.test(s));
      if (bad.length > 0) {
        ctx.addIssue({
          code: 'custom',
          message: `must be a comma list of shard ids (whole numbers from 0), not ${bad.map((b) => JSON.stringify(b)).join(', ')}`,
        });
        return z.NEVER;
      }
      const ids = parts.map(Number);
      const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
      if (twice.length > 0) {
        ctx.addIssue({ code: 'custom', message: `names shard ${[...new Set(twice)].join(', ')} more than once` });
        return z.NEVER;
      }
      return ids;
    }),
);

/** Discord's largest bots run thousands of shards; far beyond that is a typo. */
export const MAX_DISCORD_SHARDS = 100_000;

export const envSchema = z.object({
  CHAT_API_URL: urlVar(),
  CHAT_API_KEY: optionalString,
  CHAT_API_FORM: enumVar(['a', 'b', 'chat-completions', 'responses'], 'a'),
  CHAT_BOT_ID: optionalString,
  BOT_ROUTES: z.preprocess(emptyToUndefined, z.string().optional()),
  CHAT_STREAMING: enumVar(['on', 'off'], 'on'),
  CHAT_SESSION_IDLE_SECONDS: intVar(86_400, 1),
  CHAT_MAX_MESSAGE_CHARS: optionalInt(1),
  CONTEXT_MODE: enumVar(['message', 'metadata', 'off'], 'message'),
  CONTEXT_MAX_MESSAGES: intVar(30, 0, 1000),
  CONTEXT_MAX_CHARS: intVar(6000, 0),
  CHAT_REQUEST_TIMEOUT_MS: intVar(30_000, 1),
  CHAT_STREAM_IDLE_TIMEOUT_MS: intVar(60_000, 1),
  CHAT_REPLY_MAX_SECONDS: intVar(300, 1),
  CHAT_REPLY_MAX_CHARS: intVar(40_000, 1),
  // The OpenAI-compatible forms (chat-completions, responses; config/openai-forms.ts).
  CHAT_SYSTEM_PROMPT: optionalString,
  CHAT_SYSTEM_PROMPT_FILE: optionalString,
  CHAT_REQUEST_EXTRA: optionalString,
  CHAT_TRANSCRIPT_MAX_TURNS: intVar(40, 2, 10_000),
  CHAT_TRANSCRIPT_MAX_CHARS: intVar(24_000, 100),

  SLACK_BOT_TOKEN: optionalString,
  SLACK_CLIENT_ID: optionalString,
  SLACK_CLIENT_SECRET: optionalString,
  SLACK_STATE_SECRET: optionalString,
  SLACK_APP_TOKEN: optionalString,
  SLACK_SIGNING_SECRET: optionalString,
  SLACK_API_URL: urlVar('https://slack.com/api/'),
  SLACK_STREAMING: enumVar(['auto', 'edit', 'native'], 'auto'),
  SLACK_ALLOWED_TEAMS: listVar,
  SLACK_ALLOWED_CHANNELS: listVar,

  DISCORD_BOT_TOKEN: optionalString,
  DISCORD_API_URL: urlVar('https://discord.com/api'),
  DISCORD_REPLY_MODE: enumVar(['thread', 'inline'], 'thread'),
  DISCORD_ALLOWED_GUILDS: listVar,
  DISCORD_ALLOWED_CHANNELS: listVar,
  DISCORD_SHARD_COUNT: z.preprocess(emptyToUndefined, wholeNumber(1, MAX_DISCORD_SHARDS).optional()),
  DISCORD_SHARD_IDS: shardIdsVar,

  PORT: intVar(3000, 0, 65_535),
  HOST: z.preprocess(emptyToUndefined, z.string().trim().default('0.0.0.0')),
  DATABASE_PATH: z.preprocess(emptyToUndefined, z.string().trim().default('./data/bridge.db')),
  LOG_LEVEL: enumVar(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  // auto (or unset): pretty lines on a terminal, JSON lines otherwise (config.ts decides, from stdout).
  LOG_FORMAT: enumVar(['auto', 'json', 'pretty'], 'auto'),
  MAX_CONCURRENT_REPLIES: intVar(64, 1),
  MAX_QUEUED_REPLIES: intVar(256, 0),
  USER_MESSAGES_PER_MINUTE: intVar(20, 1),
  STREAM_EDIT_INTERVAL_MS: intVar(1000, 0),
  ATTACHMENT_MAX_BYTES: intVar(200_000, 1),
  DATABASE_URL: postgresUrlVar,
  REPLICA_ID: optionalString,
  REPLICA_LEASE_SECONDS: intVar(15, 1, 3600),
  FEEDBACK: enumVar(['on', 'off'], 'on'),
  // An agent's work beside the answer (issue 36): its steps while they run, the sources it cites.
  SHOW_STEPS: enumVar(['on', 'off'], 'on'),
  SHOW_SOURCES: enumVar(['on', 'off'], 'on'),
  // The largest file an assistant's reply carries inline (bytes) that the bridge uploads into the thread.
  REPLY_FILE_MAX_BYTES: intVar(8_388_608, 1),
  // Months of uptime (issue 31): peers whose X-Forwarded-For is believed; idle conversations kept.
  TRUST_PROXY: optionalString,
  CONVERSATION_RETENTION_DAYS: intVar(90, 1, 36_500),
  // The web playground at `/` (CONTRACT.md §7): auto = on when no platform is configured.
  PLAYGROUND: enumVar(['auto', 'on', 'off'], 'auto'),
  // The credential other machines present when PLAYGROUND=on (`/playground?token=…` once, or
  // `Authorization: Bearer …`); PLAYGROUND=on without it does not start.
  PLAYGROUND_TOKEN: optionalString,
  // Host names (comma list) the playground answers to besides this machine's own, e.g. the name
  // a reverse proxy forwards: any other `Host` is refused (DNS rebinding).
  PLAYGROUND_PUBLIC_HOST: listVar,
  // /metrics on its own listener (issue 39): set, a second HTTP server on METRICS_HOST (default
  // 127.0.0.1) and this port serves only /metrics, and PORT no longer serves it.
  METRICS_PORT: z.preprocess(emptyToUndefined, wholeNumber(0, 65_535).optional()),
  METRICS_HOST: optionalString,
});

export type RawEnv = z.infer<typeof envSchema>;
