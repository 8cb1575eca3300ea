import type { Config } from '../config/config.js';
import { playgroundUrl } from '../connectors/playground/index.js';
import type { PlaygroundPlan } from '../config/start-config.js';
import type { CheckClient } from './http.js';
import { type CheckRow, fail, ok } from './types.js';
import { checkUpstream } from './upstream-check.js';

// Nothing configured: `start` runs the playground with the built-in emulator as its upstream, so
// doctor checks that setup instead of an upstream nobody named. The emulator is started here as
// start would start it (in this process, on a free loopback port) and checked with the same
// requests as a real upstream; then it is closed. Nothing is written.

export async function checkBuiltInEmulator(config: Config, http: CheckClient): Promise<CheckRow[]> {
  const { startEmulator, EMULATOR_DEFAULTS } = await import('../emulator/index.js');
  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  try {
    emulator = await startEmulator({ host: '127.0.0.1', port: 0 });
  } catch (err) {
    return [
      fail(
        'upstream',
        `the built-in emulator cannot start: ${err instanceof Error ? err.message : String(err)}`,
        'set CHAT_API_URL, CHAT_API_KEY and CHAT_BOT_ID to a chat service instead',
      ),
    ];
  }
  try {
    const botId = EMULATOR_DEFAULTS.bots[0] ?? 'demo-bot';
    const up = { ...config.upstream, url: emulator.url, apiKey: EMULATOR_DEFAULTS.apiKey, botId, routes: [] };
    const rows = await checkUpstream(up, http);
    const bad = rows.find((r) => r.status === 'FAIL');
    if (bad !== undefined) {
      return [fail('upstream', `the built-in emulator did not answer as it should: ${bad.detail}`, bad.hint ?? '')];
    }
    return [
      ok(
        'upstream',
        'none configured (no CHAT_API_URL): start runs the built-in emulator, which answered; replies echo. ' +
          'Set CHAT_API_URL, CHAT_API_KEY and CHAT_BOT_ID for a real chat service',
      ),
    ];
  } finally {
    await emulator.close();
  }
}

/**
 * Where start serves the playground, and to whom. Who answers it is judged by the upstream rows
 * (`upstream`): a playground row must not say "CHAT_API_URL answers" above a row saying it
 * does not.
 */
export function playgroundRow(config: Config, plan: PlaygroundPlan, upstream: readonly CheckRow[] = []): CheckRow {
  const url = playgroundUrl(config.service.host, config.service.port);
  const reach = plan.allowRemote ? 'open to other machines: PLAYGROUND=on' : 'this machine only';
  const source = plan.emulator ? 'the built-in emulator' : 'CHAT_API_URL';
  const failed = upstream.find((r) => r.status === 'FAIL');
  if (failed !== undefined) {
    return fail(
      'playground',
      `${url} (${reach}; ${source} does not answer as it should: see ${failed.check})`,
      `its replies come from ${source}: fix the ${failed.check} row`,
    );
  }
  return ok('playground', `${url} (${reach}; ${source} answers)`);
}
