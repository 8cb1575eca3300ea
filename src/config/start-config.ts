import { buildConfig, type Config, ConfigError } from './config.js';
import type { RawEnv } from './env-schema.js';
import { parseTrustProxy, type TrustProxy } from './trust-proxy.js';

// When the playground runs, and with which upstream (CONTRACT.md §7):
// - no platform configured: on (PLAYGROUND=off turns it off); a platform configured: off unless
//   PLAYGROUND=on;
// - no platform and no CHAT_API_URL: the built-in emulator is the upstream, in this process;
// - this machine's clients only, unless PLAYGROUND=on is set explicitly (it spends the API key);
//   then every client must present PLAYGROUND_TOKEN, and without one `start` refuses (exit 2).

/** Shortest PLAYGROUND_TOKEN taken: it guards the operator's API key on the network. */
export const PLAYGROUND_TOKEN_MIN_CHARS = 20;
/** Fewest different characters in PLAYGROUND_TOKEN (`aaaa…` and `abab…` are not secrets). */
export const PLAYGROUND_TOKEN_MIN_DISTINCT = 10;
/** Least estimated strength of PLAYGROUND_TOKEN, in bits (its characters' Shannon entropy times its length). */
export const PLAYGROUND_TOKEN_MIN_BITS = 64;
const TOKEN_RULE =
  `at least ${PLAYGROUND_TOKEN_MIN_CHARS} characters, at least ${PLAYGROUND_TOKEN_MIN_DISTINCT} of them different, ` +
  `not one short piece repeated, about ${PLAYGROUND_TOKEN_MIN_BITS} bits or more (make one with: openssl rand -hex 16)`;

export interface PlaygroundPlan {
  enabled: boolean;
  /** Answer clients on other machines too (PLAYGROUND=on): each must present `token`. */
  allowRemote: boolean;
  /** No CHAT_API_URL: run the emulator in this process as the upstream. */
  emulator: boolean;
  /** PLAYGROUND_TOKEN: the credential (required when allowRemote). */
  token?: string;
  /** PLAYGROUND_PUBLIC_HOST: host names answered besides this machine's own. */
  publicHosts?: string[];
  /** Bounds other than the defaults (tests). */
  limits?: PlaygroundLimits;
  /** TRUST_PROXY: whose X-Forwarded-For / X-Forwarded-Proto the playground believes (client address, HTTPS). */
  trustProxy?: TrustProxy;
}

/** The playground's bounds (connectors/playground: streams.ts, conversation-table.ts). */
export interface PlaygroundLimits {
  /** Open event streams of one browser. Default 4. */
  streamsPerBrowser?: number;
  /** Open event streams in all. Default 64. */
  streams?: number;
  /** A stream with no reply and no request of its browser for this long ends. Default 15 minutes. */
  streamIdleMs?: number;
  /** A comment line on a quiet stream this often. Default 15 s. */
  keepaliveMs?: number;
  /** Conversations kept in memory. Default 500. */
  conversations?: number;
  /** Open event streams of one client address (any number of browsers there). Default 16. */
  streamsPerAddress?: number;
}

export function playgroundPlan(raw: RawEnv): PlaygroundPlan {
  const platform =
    raw.SLACK_BOT_TOKEN !== undefined || raw.SLACK_CLIENT_ID !== undefined || raw.DISCORD_BOT_TOKEN !== undefined;
  const enabled = raw.PLAYGROUND === 'on' || (raw.PLAYGROUND === 'auto' && !platform);
  // With a platform configured, a missing CHAT_API_URL stays a configuration error: the
  // emulator must never answer Slack or Discord users.
  const emulator = enabled && !platform && raw.CHAT_API_URL === undefined;
  const plan: PlaygroundPlan = { enabled, allowRemote: raw.PLAYGROUND === 'on', emulator };
  if (raw.PLAYGROUND_TOKEN !== undefined) plan.token = raw.PLAYGROUND_TOKEN;
  if (raw.PLAYGROUND_PUBLIC_HOST.length > 0) plan.publicHosts = raw.PLAYGROUND_PUBLIC_HOST.map((h) => h.toLowerCase());
  // Malformed, it is refused with the rest of the configuration (config.ts).
  const trust = parseTrustProxy(raw.TRUST_PROXY);
  if (trust.ok && trust.value !== undefined) plan.trustProxy = trust.value;
  return plan;
}

/**
 * Why a PLAYGROUND_TOKEN is too weak to guard the API key on a network, or undefined. The
 * strength is estimated from the token alone: its length times the Shannon entropy of its
 * characters' frequencies (32 hex digits from openssl: about 120 bits; `aaaa…`: 0).
 */
export function weakTokenReason(token: string): string | undefined {
  const chars = [...token];
  if (chars.length < PLAYGROUND_TOKEN_MIN_CHARS) return `it has ${chars.length} characters`;
  const counts = new Map<string, number>();
  for (const c of chars) counts.set(c, (counts.get(c) ?? 0) + 1);
  if (counts.size < PLAYGROUND_TOKEN_MIN_DISTINCT) return `it has only ${counts.size} different characters`;
  if (/^([\s\S]+?)\1+$/u.test(token)) return 'it is one short piece repeated';
  let bits = 0;
  for (const n of counts.values()) bits -= n * Math.log2(n / chars.length);
  if (bits < PLAYGROUND_TOKEN_MIN_BITS) return `its estimated strength is ${Math.floor(bits)} bits`;
  return undefined;
}

/** What keeps the playground from starting as configured (empty: nothing). */
export function playgroundProblems(plan: PlaygroundPlan): string[] {
  const weak = plan.token === undefined ? undefined : weakTokenReason(plan.token);
  if (weak !== undefined) return [`PLAYGROUND_TOKEN: too weak (${weak}): use ${TOKEN_RULE}`];
  if (plan.enabled && plan.allowRemote && plan.token === undefined)
    return [
      'PLAYGROUND=on opens the playground to other machines and spends your API key: set PLAYGROUND_TOKEN ' +
        `(${TOKEN_RULE}) and open /playground?token=… once in each browser; ` +
        'or leave PLAYGROUND unset (auto) to use it from this machine only',
    ];
  return [];
}

/**
 * The configuration `start` runs with, and the playground's plan: one function, so that `doctor`
 * judges the environment exactly as `start` does (no platform is fine when the playground runs;
 * no upstream is fine when the built-in emulator stands in).
 */
export function configForStart(raw: RawEnv): { config: Config; playground: PlaygroundPlan } {
  const playground = playgroundPlan(raw);
  const problems = playgroundProblems(playground);
  let config: Config;
  try {
    config = buildConfig(raw, { requirePlatform: !playground.enabled, requireUpstream: !playground.emulator });
  } catch (err) {
    if (err instanceof ConfigError && problems.length > 0) throw new ConfigError([...err.problems, ...problems]);
    throw err;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { config, playground };
}
