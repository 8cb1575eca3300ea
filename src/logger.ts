import pino, { type Logger } from 'pino';
import { scrubSecrets } from './scrub.js';
import { prettyDestination } from './logger-pretty.js';

// Every logger of the process is made here, so redaction is the same everywhere.
// Message text is only ever logged at debug level, under the key `text`.

export const REDACT_PATHS = [
  'authorization',
  'Authorization',
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  '*.headers.authorization',
  'apiKey',
  '*.apiKey',
  'token',
  '*.token',
  'botToken',
  '*.botToken',
  'appToken',
  '*.appToken',
  'signingSecret',
  '*.signingSecret',
  'clientSecret',
  '*.clientSecret',
  'stateSecret',
  '*.stateSecret',
  'client_secret',
  '*.client_secret',
  'password',
  '*.password',
];

export type { Logger };

export interface LoggerOptions {
  level?: string;
  /** Destination stream; defaults to stdout. Tests pass a sink to inspect lines. */
  destination?: pino.DestinationStream;
  /** LOG_FORMAT: `json` (default) lines, or `pretty` readable lines (see logger-pretty.ts). */
  format?: 'json' | 'pretty';
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  return pino(
    {
      name: 'assistant-bridge',
      level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // The last stop of every line, at every level: configured secret values and credential
      // patterns, wherever in the queue they ended up (a message, an error, a nested field).
      hooks: { streamWrite: scrubSecrets },
    },
    opts.format === 'pretty'
      ? prettyDestination(
          opts.destination
            ? { write: (s: string) => (opts.destination as pino.DestinationStream).write(s) }
            : undefined,
        )
      : (opts.destination ?? pino.destination({ fd: 1, sync: false })),
  );
}

/** Named children: one per part, so an operator can filter by `component`. */
export type Component =
  | 'main'
  | 'relay'
  | 'pump'
  | 'upstream'
  | 'store'
  | 'slack'
  | 'discord'
  | 'playground'
  | 'server'
  | 'emulator'
  | 'replicas';

export function componentLogger(root: Logger, component: Component): Logger {
  return root.child({ component });
}

/** A logger that writes nothing: the default in library code and tests. */
export const silentLogger: Logger = pino({ level: 'silent' });

/** Configured secret values and credential patterns out of free text: see scrub.ts. */
export { registerHeldSecrets, scrubSecrets } from './scrub.js';
