// Defaults and validation of emulator options (shared by startEmulator, setOptions and the CLI).
import { EMULATOR_FORMS, type EmulatorOptions, type RuntimeOptions, STREAM_FORMATS, STREAM_IDS } from './types.js';

export const DEFAULTS: RuntimeOptions = {
  form: 'both',
  apiKey: 'dev-key',
  bots: ['demo-bot'],
  streamFormat: 'sse-json',
  chunkDelayMs: 20,
  maxMessageChars: 4000,
  sessionIdleSeconds: 86400,
  streamIds: 'both',
  splitWrites: false,
  maxRecordedRequests: 100_000,
};

const isInt = (v: unknown, min: number) => typeof v === 'number' && Number.isInteger(v) && v >= min;

/** Throws an Error naming the first bad option. */
export function validateRuntime(p: Partial<RuntimeOptions>): void {
  if (p.form !== undefined && !EMULATOR_FORMS.includes(p.form))
    throw new Error(`form must be one of ${EMULATOR_FORMS.join(', ')}`);
  if (p.apiKey !== undefined && (typeof p.apiKey !== 'string' || p.apiKey === ''))
    throw new Error('apiKey must be a non-empty string');
  if (
    p.bots !== undefined &&
    (!Array.isArray(p.bots) || p.bots.length === 0 || p.bots.some((b) => typeof b !== 'string' || b === ''))
  ) {
    throw new Error('bots must be a non-empty list of bot ids');
  }
  if (p.streamFormat !== undefined && !STREAM_FORMATS.includes(p.streamFormat)) {
    throw new Error(`streamFormat must be one of ${STREAM_FORMATS.join(', ')}`);
  }
  if (p.chunkDelayMs !== undefined && !isInt(p.chunkDelayMs, 0))
    throw new Error('chunkDelayMs must be an integer >= 0');
  if (p.maxMessageChars !== undefined && !isInt(p.maxMessageChars, 1))
    throw new Error('maxMessageChars must be an integer >= 1');
  if (p.sessionIdleSeconds !== undefined && !(typeof p.sessionIdleSeconds === 'number' && p.sessionIdleSeconds > 0)) {
    throw new Error('sessionIdleSeconds must be a number > 0');
  }
  if (p.streamIds !== undefined && !STREAM_IDS.includes(p.streamIds))
    throw new Error(`streamIds must be one of ${STREAM_IDS.join(', ')}`);
  if (p.maxRecordedRequests !== undefined && !isInt(p.maxRecordedRequests, 0)) {
    throw new Error('maxRecordedRequests must be an integer >= 0');
  }
  if (p.splitWrites !== undefined && typeof p.splitWrites !== 'boolean')
    throw new Error('splitWrites must be a boolean');
}

/** Only the keys of RuntimeOptions, without undefined values. */
export function pickRuntime(o: EmulatorOptions | Record<string, unknown>): Partial<RuntimeOptions> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(DEFAULTS)) {
    const v = (o as Record<string, unknown>)[k];
    if (v !== undefined) out[k] = v;
  }
  return out as Partial<RuntimeOptions>;
}

export function resolveRuntime(o: EmulatorOptions): RuntimeOptions {
  const picked = pickRuntime(o);
  validateRuntime(picked);
  return { ...DEFAULTS, ...picked, bots: [...(picked.bots ?? DEFAULTS.bots)] };
}

/**
 * Who the emulator's HTTP server answers besides its API key (not runtime options: fixed at
 * start). Every route checks `Host`: loopback names only (localhost, *.localhost, 127.0.0.0/8,
 * [::1]), plus the name or address it was bound to; bound to every interface (0.0.0.0, ::) it
 * answers any Host, as a server on a network must. So a page whose DNS name rebinds to 127.0.0.1
 * gets 403, whatever key it guesses. The `/_emulator/*` admin paths answer only with `admin`.
 */
export interface EmulatorAccess {
  /** Serve `/_emulator/*` (faults, options, the request log): off unless asked for. */
  admin?: boolean;
}

/** Names a loopback-bound server answers to: `Host` without its port, lower case. */
export function hostAllowed(hostHeader: string | undefined, boundHost: string): boolean {
  const bound = boundHost.toLowerCase().replace(/^\[|\]$/g, '');
  if (bound === '0.0.0.0' || bound === '::' || bound === '') return true;
  const name = hostName(hostHeader);
  if (name === undefined) return false;
  if (name === bound || name === 'localhost' || name.endsWith('.localhost') || name === '::1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

function hostName(header: string | undefined): string | undefined {
  if (header === undefined || header === '' || /[\s/@?#\\]/.test(header)) return undefined;
  try {
    return new URL(`http://${header}`).hostname
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '')
      .toLowerCase();
  } catch {
    return undefined;
  }
}
