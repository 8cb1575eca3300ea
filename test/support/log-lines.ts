import { EventEmitter } from 'node:events';
import { createLogger, type Logger } from '../../src/logger.js';

// A real pino logger whose lines a test can await ("shard 1 is reconnecting"), instead of polling
// or sleeping until something has probably happened.

export type LogLine = Record<string, unknown> & { msg?: string };

export class LogLines {
  readonly lines: LogLine[] = [];
  private readonly added = new EventEmitter();
  readonly logger: Logger;

  constructor(level = 'info') {
    this.logger = createLogger({
      level,
      destination: {
        write: (line: string) => {
          const parsed = JSON.parse(line) as LogLine;
          this.lines.push(parsed);
          this.added.emit('line', parsed);
        },
      },
    });
  }

  /** Lines with message `msg` (and matching `where`), so far. */
  find(msg: string, where: (l: LogLine) => boolean = () => true): LogLine[] {
    return this.lines.filter((l) => l.msg === msg && where(l));
  }

  /** The first line with message `msg` matching `where` logged after line number `from` (default: any). */
  waitFor(msg: string, where: (l: LogLine) => boolean = () => true, opts: { from?: number; timeoutMs?: number } = {}) {
    const from = opts.from ?? 0;
    const hit = this.lines.slice(from).find((l) => l.msg === msg && where(l));
    if (hit !== undefined) return Promise.resolve(hit);
    const timeoutMs = opts.timeoutMs ?? 15_000;
    return new Promise<LogLine>((resolve, reject) => {
      const onLine = (l: LogLine) => {
        if (l.msg !== msg || !where(l)) return;
        cleanup();
        resolve(l);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no log line "${msg}" within ${timeoutMs} ms`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.added.off('line', onLine);
      };
      this.added.on('line', onLine);
    });
  }

  /** A mark for waitFor's `from`: only lines logged after now. */
  mark(): number {
    return this.lines.length;
  }
}
