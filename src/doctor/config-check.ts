import { type Config, ConfigError, type Env, loadConfig, parseRawEnv } from '../config/config.js';
import { slackTokenProblems } from '../config/slack-tokens.js';
import { discordTokenProblems } from '../config/discord-token.js';
import { configForStart, type PlaygroundPlan } from '../config/start-config.js';
import { describeUnknown, unknownVariables } from '../config/unknown-vars.js';
import { type CheckRow, fail, ok, warn } from './types.js';

// The first row: does the environment make a valid configuration? Judged by `loadConfig` with
// the options `start` uses (configForStart), so doctor fails exactly where start would.
// When only start-time requirements are missing, the other checks still run on what is set:
// doctor stays useful before Slack or Discord are set up.

export interface ConfigResult {
  row: CheckRow;
  config: Config | undefined;
  /** How start would run the playground (absent when the configuration is not valid for start). */
  playground?: PlaygroundPlan;
}

export function checkConfig(env: Env): ConfigResult {
  try {
    const raw = parseRawEnv(env);
    const { config, playground } = configForStart(raw);
    const warnings = [...slackTokenProblems(raw).warnings, ...discordTokenProblems(raw).warnings].map(
      (w) => `\nwarning: ${w}`,
    );
    const detail =
      describe(config) +
      (playground.enabled
        ? `; the playground at / (${playground.emulator ? 'built-in emulator' : 'CHAT_API_URL'})`
        : '') +
      warnings.join('');
    // A token of no known shape still starts, but is likely not what was meant: WARN, not ok.
    const row =
      warnings.length > 0 ? warn('config', detail, 'check the token named on the warning line') : ok('config', detail);
    return { row, config, playground };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const row = fail('config', err.problems.join('\n'), 'set or correct the variables named (see .env.example)');
    try {
      return { row, config: loadConfig(env, { requirePlatform: false }) };
    } catch (inner) {
      if (!(inner instanceof ConfigError)) throw inner;
      return { row, config: undefined };
    }
  }
}

function describe(c: Config): string {
  const platforms = [
    c.slack ? `Slack (${c.slack.appToken ? 'Socket Mode' : 'HTTP mode'}${c.slack.oauth ? ', OAuth' : ''})` : undefined,
    c.discord ? `Discord (${c.discord.replyMode} replies)` : undefined,
  ].filter((p) => p !== undefined);
  return `valid; Form ${c.upstream.form.toUpperCase()}, ${platforms.length > 0 ? platforms.join(', ') : 'no platform yet'}`;
}

/**
 * The row for names that look like the bridge's but are not (a typo is otherwise silently
 * ignored); undefined when there are none. `start` logs the same lines as warnings.
 */
export function checkVariableNames(env: Env, fileNames: ReadonlySet<string> = new Set()): CheckRow | undefined {
  const unknown = unknownVariables(env, fileNames);
  if (unknown.length === 0) return undefined;
  return warn(
    'config names',
    unknown.map(describeUnknown).join('\n'),
    'rename each to the name the bridge reads, or remove it',
  );
}
