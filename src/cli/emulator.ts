// `assistant-bridge emulator`: runs the upstream chat-service emulator until SIGINT/SIGTERM.
import { startEmulator } from '../emulator/index.js';
import { DEFAULTS, type EmulatorAccess } from '../emulator/options.js';
import { EMULATOR_FORMS, type EmulatorOptions, STREAM_FORMATS, STREAM_IDS } from '../emulator/types.js';

export interface RunIo {
  stdout?: { write(s: string): unknown };
  stderr?: { write(s: string): unknown };
  /** Stops the emulator like a signal would (tests). */
  signal?: AbortSignal;
}

const USAGE = `usage: assistant-bridge emulator [--port N] [--host H] [--form a|b|both|chat-completions|responses|all] [--api-key K]
  [--bots id1,id2] [--stream-format sse-json|sse-text|ndjson|json-preamble|plain] [--chunk-delay-ms N]
  [--max-message-chars N] [--session-idle-seconds N] [--stream-ids header|event|both|none] [--admin]
  --admin serves /_emulator/* (faults, options, the request log); off by default
`;

type Parsed = { ok: true; opts: EmulatorOptions & EmulatorAccess; help: boolean } | { ok: false; error: string };

function int(flag: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER): number | string {
  if (!/^\d+$/.test(raw)) return `${flag} must be an integer, got "${raw}"`;
  const n = Number(raw);
  if (n < min || n > max) return `${flag} must be between ${min} and ${max}, got ${raw}`;
  return n;
}

function oneOf<T extends string>(flag: string, raw: string, allowed: readonly T[]): T | { error: string } {
  return (allowed as readonly string[]).includes(raw)
    ? (raw as T)
    : { error: `${flag} must be one of ${allowed.join(', ')}, got "${raw}"` };
}

export function parseArgs(args: string[]): Parsed {
  const opts: EmulatorOptions & EmulatorAccess = {
    port: 8787,
    host: '127.0.0.1',
    ...DEFAULTS,
    bots: [...DEFAULTS.bots],
  };
  let help = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    if (arg === '--admin') {
      opts.admin = true;
      continue;
    }
    if (!arg.startsWith('--')) return { ok: false, error: `unexpected argument "${arg}"` };
    const eq = arg.indexOf('=');
    const flag = eq >= 0 ? arg.slice(0, eq) : arg;
    let value: string | undefined = eq >= 0 ? arg.slice(eq + 1) : undefined;
    if (value === undefined) {
      const next = args[i + 1];
      if (next === undefined || next.startsWith('--')) return { ok: false, error: `${flag} needs a value` };
      value = next;
      i++;
    }
    const err = apply(opts, flag, value);
    if (err) return { ok: false, error: err };
  }
  return { ok: true, opts, help };
}

function apply(opts: EmulatorOptions, flag: string, value: string): string | undefined {
  const num = (min: number, max?: number) => int(flag, value, min, max);
  switch (flag) {
    case '--port': {
      const n = num(0, 65535);
      if (typeof n === 'string') return n;
      opts.port = n;
      return;
    }
    case '--host':
      if (value === '') return '--host must not be empty';
      opts.host = value;
      return;
    case '--form': {
      const f = oneOf(flag, value, EMULATOR_FORMS);
      if (typeof f !== 'string') return f.error;
      opts.form = f;
      return;
    }
    case '--api-key':
      if (value === '') return '--api-key must not be empty';
      opts.apiKey = value;
      return;
    case '--bots': {
      const bots = value
        .split(',')
        .map((b) => b.trim())
        .filter((b) => b !== '');
      if (bots.length === 0) return '--bots needs at least one bot id';
      opts.bots = bots;
      return;
    }
    case '--stream-format': {
      const f = oneOf(flag, value, STREAM_FORMATS);
      if (typeof f !== 'string') return f.error;
      opts.streamFormat = f;
      return;
    }
    case '--stream-ids': {
      const f = oneOf(flag, value, STREAM_IDS);
      if (typeof f !== 'string') return f.error;
      opts.streamIds = f;
      return;
    }
    case '--chunk-delay-ms': {
      const n = num(0, 600_000);
      if (typeof n === 'string') return n;
      opts.chunkDelayMs = n;
      return;
    }
    case '--max-message-chars': {
      const n = num(1);
      if (typeof n === 'string') return n;
      opts.maxMessageChars = n;
      return;
    }
    case '--session-idle-seconds': {
      const n = num(1);
      if (typeof n === 'string') return n;
      opts.sessionIdleSeconds = n;
      return;
    }
    default:
      return `unknown flag ${flag}`;
  }
}

export async function run(args: string[], io: RunIo = {}): Promise<number> {
  const out = io.stdout ?? process.stdout;
  const err = io.stderr ?? process.stderr;
  const parsed = parseArgs(args);
  if (!parsed.ok) {
    err.write(`emulator: ${parsed.error} (see --help)\n`);
    return 2;
  }
  if (parsed.help) {
    out.write(USAGE);
    return 0;
  }
  let emu: Awaited<ReturnType<typeof startEmulator>>;
  try {
    emu = await startEmulator(parsed.opts);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const where = `${parsed.opts.host}:${parsed.opts.port}`;
    err.write(
      code === 'EADDRINUSE'
        ? `emulator: ${where} is already in use\n`
        : `emulator: cannot listen on ${where}: ${e instanceof Error ? e.message : String(e)}\n`,
    );
    return 1;
  }
  out.write(`listening on ${emu.url}\n`);
  out.write(`bots: ${emu.options.bots.join(', ')}\n`);

  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      io.signal?.removeEventListener('abort', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    if (io.signal?.aborted) stop();
    else io.signal?.addEventListener('abort', stop, { once: true });
  });
  await emu.close();
  return 0;
}
