import { Agent, request } from 'undici';
import { scrubSecrets } from '../logger.js';

// The doctor's HTTP client: one request at a time per check, each bounded by a short timeout
// (connect, headers and body together), errors turned into a sentence an operator can act on.

export const DEFAULT_TIMEOUT_MS = 5000;

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON, or undefined when the body was not JSON (then `text` has it). */
  json: unknown;
  text: string;
  ms: number;
}

/** The request never got an HTTP answer. */
export class CheckError extends Error {
  override readonly name = 'CheckError';
  constructor(
    readonly kind: 'timeout' | 'network',
    message: string,
  ) {
    super(message);
  }
}

export interface CheckClient {
  readonly timeoutMs: number;
  get(url: string, headers?: Record<string, string>): Promise<Answer>;
  post(url: string, headers?: Record<string, string>, body?: string): Promise<Answer>;
  close(): Promise<void>;
}

export function createCheckClient(timeoutMs = DEFAULT_TIMEOUT_MS): CheckClient {
  // Its own pool, so closing it after the run leaves no sockets behind (and the timeouts apply).
  const agent = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });

  const send = async (method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: string) => {
    const started = performance.now();
    try {
      const res = await request(url, {
        method,
        headers,
        body: body ?? null,
        dispatcher: agent,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.body.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.statusCode, headers: res.headers, json, text, ms: Math.round(performance.now() - started) };
    } catch (err) {
      throw toCheckError(err, timeoutMs);
    }
  };

  return {
    timeoutMs,
    get: (url, headers = {}) => send('GET', url, headers),
    post: (url, headers = {}, body) => send('POST', url, headers, body),
    close: () => agent.close(),
  };
}

function toCheckError(err: unknown, timeoutMs: number): CheckError {
  const e = err as {
    name?: string;
    code?: string;
    message?: string;
    hostname?: string;
    cause?: { code?: string; message?: string; hostname?: string };
  };
  const code = e.code ?? e.cause?.code;
  // The host a lookup failed for, as start says it (lifecycle.ts errTextWithCause).
  const host = e.hostname ?? e.cause?.hostname;
  if (
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  ) {
    return new CheckError('timeout', `no answer within ${seconds(timeoutMs)}`);
  }
  const known = CONNECT_ERRORS[code ?? ''];
  const why =
    known !== undefined && host !== undefined && (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      ? known.replace(' (', `: ${host} (`)
      : (known ?? scrubSecrets(e.cause?.message ?? e.message ?? String(err)));
  return new CheckError('network', code && !(code in CONNECT_ERRORS) ? `${why} (${code})` : why);
}

const CONNECT_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused (ECONNREFUSED)',
  ECONNRESET: 'connection reset (ECONNRESET)',
  ENOTFOUND: 'host name not found (ENOTFOUND)',
  EAI_AGAIN: 'host name lookup failed (EAI_AGAIN)',
  EHOSTUNREACH: 'host unreachable (EHOSTUNREACH)',
  ENETUNREACH: 'network unreachable (ENETUNREACH)',
  UND_ERR_SOCKET: 'the connection closed before an answer',
};

export const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/** A short, secret-free excerpt of an error body for a detail cell. */
export function excerpt(answer: Answer): string {
  const j = answer.json as { error?: unknown; message?: unknown } | undefined;
  let msg: unknown = j?.error ?? j?.message;
  if (msg !== null && typeof msg === 'object') {
    const o = msg as { code?: unknown; message?: unknown };
    msg = [o.code, o.message].filter((v) => typeof v === 'string').join(': ');
  }
  const text = typeof msg === 'string' && msg !== '' ? msg : answer.text;
  const one = scrubSecrets(text.replace(/\s+/g, ' ').trim());
  return one.length > 100 ? `${one.slice(0, 97)}...` : one;
}

/** Scheme, host and path of a URL, never its user:password part. */
export function showUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(invalid URL)';
  }
}
