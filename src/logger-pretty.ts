import type { DestinationStream } from 'pino';

// LOG_FORMAT=pretty: pino's JSON lines turned into one readable line each for a person at a
// terminal ("12:00:01.234 INFO  main: listening port=3000"), colours only on a TTY. Built in,
// no pino-pretty: the process writes through it synchronously, and redaction has already been
// applied by pino before a line gets here.

const LEVELS: Record<number, [string, string]> = {
  10: ['TRACE', '\x1b[90m'],
  20: ['DEBUG', '\x1b[36m'],
  30: ['INFO ', '\x1b[32m'],
  40: ['WARN ', '\x1b[33m'],
  50: ['ERROR', '\x1b[31m'],
  60: ['FATAL', '\x1b[35m'],
};
const RESET = '\x1b[0m';
/** Fields every line has, or shown in the queue's head: not repeated as key=value. */
const HEAD = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'component']);

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}

/** One JSON line as a readable line (the line unchanged when it is not JSON). */
export function prettyLine(line: string, colour = false): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const time = typeof rec.time === 'string' ? (/T(\d\d:\d\d:\d\d(?:\.\d+)?)/.exec(rec.time)?.[1] ?? rec.time) : '';
  const [label, tint] = LEVELS[Number(rec.level)] ?? [String(rec.level), ''];
  const level = colour && tint ? `${tint}${label}${RESET}` : label;
  const component = typeof rec.component === 'string' ? `${rec.component}: ` : '';
  const msg = typeof rec.msg === 'string' ? rec.msg : '';
  let rest = '';
  let stack = '';
  // An address to open (the playground's) on a line of its own, set apart: easy to see and copy.
  let link = '';
  for (const [k, v] of Object.entries(rec)) {
    if (HEAD.has(k) || v === undefined) continue;
    if (k === 'err' && v !== null && typeof v === 'object' && typeof (v as { stack?: unknown }).stack === 'string') {
      stack = `\n    ${(v as { stack: string }).stack.replace(/\n/g, '\n    ')}`;
      continue;
    }
    if (k === 'url' && typeof v === 'string') {
      link = `\n\n    ${v}\n`;
      continue;
    }
    rest += ` ${k}=${value(v)}`;
  }
  return `${time} ${level} ${component}${msg}${rest}${stack}${link}\n`;
}

/** A pino destination writing pretty lines to `out` (default stdout). */
export function prettyDestination(
  out: { write(s: string): unknown; isTTY?: boolean } = process.stdout,
): DestinationStream {
  const colour = out.isTTY === true && process.env.NO_COLOR === undefined;
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n')) if (line !== '') out.write(prettyLine(line, colour));
    },
  };
}
