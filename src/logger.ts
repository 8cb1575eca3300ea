import pino, { type Logger } from 'pino';

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
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  return pino(
    {
      name: 'assistant-bridge',
      level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    opts.destination ?? pino.destination({ fd: 1, sync: false }),
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

/** Replace Slack/Discord/Bearer tokens and OAuth client secrets in free text (e.g. error messages from SDKs) before logging. */
export function scrubSecrets(text: string): string {
  return (
    text
      .replace(/\bBearer\s+[A-Za-z0-9._~+/=-]+/g, 'Bearer [redacted]')
      // OAuth client secrets as Slack's (and most) SDKs put them in request bodies: JSON or form.
      .replace(/("client_secret"\s*:\s*")[^"]*"/g, '$1[redacted]"')
      .replace(/\b(client_secret=)[^&\s"]+/g, '$1[redacted]')
      .replace(/\bx(?:ox[abposr]|app)-[A-Za-z0-9-]+/g, '[redacted-slack-token]')
      .replace(/\b[MNO][A-Za-z\d_-]{23,25}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,38}\b/g, '[redacted-discord-token]')
  );
}
