import type { Env } from '../config/config.js';
import { scrubSecrets } from '../scrub.js';
import { checkConfig, checkVariableNames } from './config-check.js';
import { checkDatabase } from './database-check.js';
import { checkDiscord } from './discord-check.js';
import { checkBuiltInEmulator, playgroundRow } from './emulator-check.js';
import { createCheckClient, DEFAULT_TIMEOUT_MS } from './http.js';
import { checkSlack } from './slack-check.js';
import type { CheckRow } from './types.js';
import { checkUpstream } from './upstream-check.js';

export { renderTable, summary } from './table.js';
export type { CheckRow, CheckStatus } from './types.js';

export interface DoctorOptions {
  /** Per network request (connect + answer). Default 5 s. */
  timeoutMs?: number;
  /** The names the `.env` set (readEnvFrom), so a misspelt one is said to be there. */
  envFileNames?: ReadonlySet<string>;
}

/**
 * Every check, in table order. The network groups (upstream, Slack, Discord) run at the same
 * time, so the whole run takes about as long as the slowest one. Never throws for a problem
 * an operator can fix: those are FAIL rows.
 */
export async function runChecks(env: Env, opts: DoctorOptions = {}): Promise<CheckRow[]> {
  const { row, config, playground } = checkConfig(env);
  const names = checkVariableNames(env, opts.envFileNames);
  const configRows = names === undefined ? [row] : [row, names];
  if (!config) {
    return [...configRows.map(scrubRow), ...['database', 'upstream', 'slack', 'discord'].map((c) => skipRow(c))];
  }
  const http = createCheckClient(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  try {
    const [database, ...groups] = await Promise.all([
      checkDatabase(config),
      // No CHAT_API_URL where start would run the built-in emulator: that is what is checked.
      playground?.emulator === true ? checkBuiltInEmulator(config, http) : checkUpstream(config.upstream, http),
      checkSlack(config.slack, http),
      checkDiscord(config.discord, http),
    ]);
    const extra = playground?.enabled === true ? [playgroundRow(config, playground, groups[0])] : [];
    return [...configRows, database, ...extra, ...groups.flat()].map(scrubRow);
  } finally {
    await http.close();
  }
}

/** A row free of configured secret values and credential patterns (an upstream may echo its key). */
function scrubRow(r: CheckRow): CheckRow {
  return {
    ...r,
    detail: scrubSecrets(r.detail),
    ...(r.hint !== undefined ? { hint: scrubSecrets(r.hint) } : {}),
  };
}

const skipRow = (check: string): CheckRow => ({ check, status: 'skip', detail: 'configuration invalid' });
