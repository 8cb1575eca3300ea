import { buildConfig, type Config, ConfigError, type Env, parseRawEnv } from '../config/config.js';
import { type CheckRow, fail, ok } from './types.js';

// The first row: does the environment make a valid configuration? `doctor` does not require a
// platform (it is useful before Slack or Discord are set up), `start` does.

export interface ConfigResult {
  row: CheckRow;
  config: Config | undefined;
}

export function checkConfig(env: Env): ConfigResult {
  try {
    const config = buildConfig(parseRawEnv(env), { requirePlatform: false });
    return { row: ok('config', describe(config)), config };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return {
      row: fail('config', err.problems.join('\n'), 'set or correct the variables named (see .env.example)'),
      config: undefined,
    };
  }
}

function describe(c: Config): string {
  const platforms = [
    c.slack ? `Slack (${c.slack.appToken ? 'Socket Mode' : 'HTTP mode'}${c.slack.oauth ? ', OAuth' : ''})` : undefined,
    c.discord ? `Discord (${c.discord.replyMode} replies)` : undefined,
  ].filter((p) => p !== undefined);
  return `valid; Form ${c.upstream.form.toUpperCase()}, ${platforms.length > 0 ? platforms.join(', ') : 'no platform yet'}`;
}
