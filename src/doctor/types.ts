import type { Config } from '../config/config.js';
import type { CheckClient } from './http.js';

// One row of the doctor's table. `hint` says what to change; a row that passes needs none.

/** WARN: works as configured, but likely not as meant (doctor still exits 0). */
export type CheckStatus = 'ok' | 'FAIL' | 'WARN' | 'skip';

export interface CheckRow {
  check: string;
  status: CheckStatus;
  /** May hold several lines (a ConfigError's problems); the table indents the rest. */
  detail: string;
  hint?: string;
}

/** A bot id the configuration can route to, and the variable (and BOT_ROUTES rules) that named it. */
export interface BotToCheck {
  botId: string;
  namedBy: string;
}

export interface DoctorContext {
  config: Config;
  http: CheckClient;
}

export const ok = (check: string, detail: string): CheckRow => ({ check, status: 'ok', detail });
export const skip = (check: string, detail: string): CheckRow => ({ check, status: 'skip', detail });
export const warn = (check: string, detail: string, hint: string): CheckRow => ({
  check,
  status: 'WARN',
  detail,
  hint,
});
export const fail = (check: string, detail: string, hint: string): CheckRow => ({
  check,
  status: 'FAIL',
  detail,
  hint,
});
