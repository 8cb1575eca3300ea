import { LogLevel } from '@slack/bolt';
import { type Logger, scrubSecrets } from '../../logger.js';

// Bolt and its clients log through this: pino underneath, secrets scrubbed from free text.

export interface BoltLogger {
  debug(...msg: unknown[]): void;
  info(...msg: unknown[]): void;
  warn(...msg: unknown[]): void;
  error(...msg: unknown[]): void;
  setLevel(level: LogLevel): void;
  getLevel(): LogLevel;
  setName(name: string): void;
}

const text = (msg: unknown[]) =>
  scrubSecrets(
    msg.map((m) => (m instanceof Error ? m.message : typeof m === 'string' ? m : JSON.stringify(m))).join(' '),
  );

export function boltLogger(logger: Logger): BoltLogger {
  let level = LogLevel.INFO;
  return {
    // Bolt's debug output includes request bodies (message text): pino's debug only.
    debug: (...m) => logger.isLevelEnabled('debug') && logger.debug({ bolt: true }, text(m)),
    info: (...m) => logger.info({ bolt: true }, text(m)),
    warn: (...m) => logger.warn({ bolt: true }, text(m)),
    error: (...m) => logger.error({ bolt: true }, text(m)),
    setLevel: (l) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}
