import { buildConfig, type Config } from './config.js';
import type { RawEnv } from './env-schema.js';

// When the playground runs, and with which upstream (CONTRACT.md §7):
// - no platform configured: on (PLAYGROUND=off turns it off); a platform configured: off unless
//   PLAYGROUND=on;
// - no platform and no CHAT_API_URL: the built-in emulator is the upstream, in this process;
// - loopback clients only, unless PLAYGROUND=on is set explicitly (it spends the API key).

export interface PlaygroundPlan {
  enabled: boolean;
  /** Answer clients on other machines too (PLAYGROUND=on). */
  allowRemote: boolean;
  /** No CHAT_API_URL: run the emulator in this process as the upstream. */
  emulator: boolean;
}

export function playgroundPlan(raw: RawEnv): PlaygroundPlan {
  const platform =
    raw.SLACK_BOT_TOKEN !== undefined || raw.SLACK_CLIENT_ID !== undefined || raw.DISCORD_BOT_TOKEN !== undefined;
  const enabled = raw.PLAYGROUND === 'on' || (raw.PLAYGROUND === 'auto' && !platform);
  // With a platform configured, a missing CHAT_API_URL stays a configuration error: the
  // emulator must never answer Slack or Discord users.
  const emulator = enabled && !platform && raw.CHAT_API_URL === undefined;
  return { enabled, allowRemote: raw.PLAYGROUND === 'on', emulator };
}

/**
 * The configuration `start` runs with, and the playground's plan: one function, so that `doctor`
 * judges the environment exactly as `start` does (no platform is fine when the playground runs;
 * no upstream is fine when the built-in emulator stands in).
 */
export function configForStart(raw: RawEnv): { config: Config; playground: PlaygroundPlan } {
  const playground = playgroundPlan(raw);
  const config = buildConfig(raw, { requirePlatform: !playground.enabled, requireUpstream: !playground.emulator });
  return { config, playground };
}
