import { ChatError, type ChatErrorKind } from '../core/chat-port.js';
import { scrubSecrets } from '../logger.js';
import { firstString, isObject, parseObject } from './event-rules.js';

// Upstream answers and transport failures → the port's ChatError kinds (CONTRACT.md §4 errors).

export interface ErrorContext {
  /** Short endpoint name for details and logs, e.g. `A2 stream`. */
  endpoint: string;
  /** Whether the request named a conversation (Form A conversationId / Form B session_id). */
  conversationSent: boolean;
  /** Removes the API key from any text that could end up in a message. */
  redact: (text: string) => string;
  now?: () => number;
}

/** Retry-After: delta seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The code and message of an error body: Form B `code` / `error.code` / a code-like `error`, Form A
 * `error`. A body that is not JSON is its own message, redacted whole (`redact`) BEFORE it is cut
 * to 200 characters: cut first, a secret straddling the cut would no longer match and its first
 * part would reach the log.
 */
export function parseErrorBody(
  text: string,
  redact: (text: string) => string = (t) => t,
): { code?: string; message?: string } {
  const obj = parseObject(text);
  if (!obj) {
    const t = redact(text.trim()).slice(0, 200);
    return t === '' ? {} : { message: t };
  }
  const err = obj.error;
  const errObj = isObject(err) ? err : undefined;
  const errString = typeof err === 'string' ? err : undefined;
  const codeLike = errString !== undefined && /^[A-Z][A-Z0-9_]*$/.test(errString) ? errString : undefined;
  const code = firstString(obj, ['code'], true) ?? firstString(errObj, ['code'], true) ?? codeLike;
  const message =
    firstString(errObj, ['message', 'detail']) ??
    (codeLike === undefined ? errString : undefined) ??
    firstString(obj, ['message', 'detail']);
  return { ...(code !== undefined ? { code } : {}), ...(message !== undefined ? { message } : {}) };
}

const BOT_UNKNOWN_CODE = /BOT.*(INVALID|NOT_FOUND|UNKNOWN)|(INVALID|UNKNOWN).*BOT/;
const GONE_CODE = /SESSION|EXPIRED|NOT_FOUND/;
const TOO_LONG_MESSAGE = /too long|too many characters|exceeds? .*(length|characters|limit)/i;

function saysBotUnknown(code: string | undefined, message: string | undefined): boolean {
  if (code !== undefined && BOT_UNKNOWN_CODE.test(code)) return true;
  return message !== undefined && /\bbot\b/i.test(message) && !/conversation|session/i.test(message);
}

export function kindOf(
  status: number,
  code: string | undefined,
  message: string | undefined,
  conversationSent: boolean,
): ChatErrorKind {
  const c = code?.toUpperCase();
  if (status === 401 || c === 'UNAUTHORIZED') return 'unauthorized';
  if (status === 429 || c === 'RATE_LIMITED') return 'rate_limited';
  if (status >= 500 || c === 'BOT_ERROR') return 'server';
  if (c === 'MESSAGE_TOO_LONG' || status === 413) return 'too_long';
  if (c !== undefined && BOT_UNKNOWN_CODE.test(c)) return 'unknown_bot';
  if (status === 410 || (c !== undefined && GONE_CODE.test(c))) return 'conversation_gone';
  if (status === 404) return conversationSent && !saysBotUnknown(c, message) ? 'conversation_gone' : 'unknown_bot';
  if (status === 400 && c === undefined && message !== undefined && TOO_LONG_MESSAGE.test(message)) return 'too_long';
  return 'bad_request';
}

/** A non-2xx answer. `bodyText` is (the start of) its body. */
export function httpError(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  bodyText: string,
  ctx: ErrorContext,
): ChatError {
  const { code, message } = parseErrorBody(bodyText, ctx.redact);
  const kind = kindOf(status, code, message, ctx.conversationSent);
  const retryAfterMs = kind === 'rate_limited' ? parseRetryAfter(headers['retry-after'], ctx.now?.()) : undefined;
  const what = [`${status}`, code, message].filter((s) => s !== undefined).join(' ');
  return new ChatError(kind, ctx.redact(`${ctx.endpoint}: upstream answered ${what}`), {
    status,
    endpoint: ctx.endpoint,
    ...(code !== undefined ? { code } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

/** A failure before a response arrived: timeouts, refused or reset connections. */
export function transportError(err: unknown, ctx: ErrorContext): ChatError {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown } };
  const code = typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : undefined;
  const text = typeof e?.message === 'string' && e.message !== '' ? e.message : String(err);
  const kind: ChatErrorKind = code !== undefined && TIMEOUT_CODES.has(code) ? 'timeout' : 'network';
  const what = kind === 'timeout' ? 'no answer in time' : 'connection failed';
  return new ChatError(kind, ctx.redact(`${ctx.endpoint}: ${what} (${code ?? text})`), {
    endpoint: ctx.endpoint,
    ...(code !== undefined ? { code } : {}),
  });
}

/** A redactor for one API key: the key itself and any Bearer credential or platform token. */
export function keyRedactor(apiKey: string): (text: string) => string {
  return (text) => {
    const scrubbed = scrubSecrets(text);
    return apiKey.length >= 4 ? scrubbed.split(apiKey).join('[redacted]') : scrubbed;
  };
}
