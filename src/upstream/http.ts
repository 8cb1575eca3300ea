import { Pool } from 'undici';
import { ChatError, type ChatStream, type SendRequest, type SendResult } from '../core/chat-port.js';
import type { TranscriptBounds, TranscriptStore } from '../core/store-ports.js';
import { type Logger, silentLogger } from '../logger.js';
import { type ErrorContext, httpError, keyRedactor, transportError } from './errors.js';
import { notChatApi } from './mapping.js';
import type { DecoderOptions, StreamDecoder } from './event-rules.js';
import { bytesForChars, createChatStream, cutText, parseBody } from './stream-reader.js';

// The HTTP side shared by Form A and Form B: one keep-alive undici Pool for the upstream origin,
// the bearer key, timeouts, error mapping and retries. Knows paths and JSON, not the forms.
// The retry policy of CONTRACT.md §4 (at the end): 429 honouring Retry-After within a time
// budget; 5xx and failed connections a few times with exponential backoff and full jitter; nothing
// else. It wraps one attempt that ends at the response headers, so a reply whose body was read is
// never retried.

/** Which API the upstream speaks (CHAT_API_FORM). Only src/upstream knows the forms. */
export type ChatForm = 'a' | 'b' | 'chat-completions' | 'responses';

export interface UpstreamClientOptions {
  /** CHAT_API_URL: the base URL; Form A paths go under `/api/v1`, Form B under `/v1`. */
  url: string;
  apiKey: string;
  form: ChatForm;
  /** Connect + response headers. */
  requestTimeoutMs: number;
  /** No byte of a response body for this long ends it (a stream: as interrupted). */
  streamIdleTimeoutMs: number;
  logger?: Logger;
  retry?: RetryOptions;
  /** Injectable for tests: the waits between retries. */
  sleep?: Sleep;
  random?: () => number;
  /** Told of each retry before its wait (after the log line): the terminal `chat` shows it. */
  onRetry?: (err: ChatError, attempt: number, waitMs: number) => void;
  /**
   * CHAT_REPLY_MAX_CHARS: the most reply text taken. A stream past it is cut and ends as too_long;
   * a one-response body is not read past bytesForChars(maxReplyChars). Unset: unbounded.
   */
  maxReplyChars?: number | undefined;
  /**
   * The largest file an agent event of a stream may carry inline (bytes); a larger one is passed
   * on named only. Unset: 8 MB.
   */
  maxFileBytes?: number | undefined;
  /** The OpenAI-compatible forms' settings and transcript store (openai-common.ts). */
  openAi?: OpenAiOptions | undefined;
}

/** What only the OpenAI-compatible forms use (CHAT_SYSTEM_PROMPT*, CHAT_REQUEST_EXTRA, CHAT_TRANSCRIPT_*). */
export interface OpenAiOptions {
  systemPrompt?: string | undefined;
  /** Merged into every request body as given; the form's own fields (model, input, stream) win. */
  requestExtra?: Record<string, unknown> | undefined;
  /** What a stored transcript keeps (Chat Completions). */
  transcript?: TranscriptBounds | undefined;
  /** Where Chat Completions keeps its transcripts; unset: in memory, for this process only. */
  transcripts?: TranscriptStore | undefined;
}

export interface CallSpec {
  method: 'GET' | 'POST';
  /** Under the base URL's path, e.g. `/api/v1/chat/demo/message`. */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Short name for errors and logs, e.g. `A2 stream`. */
  endpoint: string;
  conversationSent: boolean;
  signal?: AbortSignal | undefined;
  /** A1/B1: the body is a reply, bounded by maxReplyChars (else by OTHER_BODY_LIMIT). */
  reply?: boolean;
  /** A stream with its own grammar (OpenAI Responses): its decoder, whatever the content type. */
  decoder?: (opts: DecoderOptions) => StreamDecoder;
}

/**
 * A Form A or B message call (A1/A2, B1/B2): the request's body posted, the conversation counted
 * as sent when the request names one, aborted with the request.
 */
export function messageCall(req: SendRequest, path: string, body: unknown, endpoint: string): CallSpec {
  return {
    method: 'POST',
    path,
    body,
    endpoint,
    conversationSent: req.conversationId !== undefined,
    signal: req.signal,
  };
}

export interface JsonReply {
  /** The parsed JSON body, or the body text when it is not JSON; undefined when too long. */
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
  /** A reply body past its byte bound: the request was aborted and nothing of it was parsed. */
  tooLong?: true;
}

const ERROR_BODY_LIMIT = 64 * 1024;
/** History and lists have no reply cap, but an upstream must not be able to fill memory with one. */
const OTHER_BODY_LIMIT = 32 * 1024 * 1024;
const STREAM_ACCEPT = 'text/event-stream, application/x-ndjson, application/json;q=0.9, text/plain;q=0.8, */*;q=0.5';

export function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export class UpstreamHttp {
  private readonly pool: Pool;
  private readonly basePath: string;
  private readonly headers: Record<string, string>;
  private readonly policy: RetryPolicy;
  private readonly log: Logger;
  private readonly maxReplyChars: number | undefined;
  private readonly maxFileBytes: number | undefined;
  readonly redact: (text: string) => string;

  constructor(opts: UpstreamClientOptions) {
    const base = new URL(opts.url);
    this.basePath = base.pathname.replace(/\/+$/, '');
    this.pool = new Pool(base.origin, {
      keepAliveTimeout: 30_000,
      headersTimeout: opts.requestTimeoutMs,
      bodyTimeout: opts.streamIdleTimeoutMs,
      connect: { timeout: opts.requestTimeoutMs },
    });
    this.headers = { authorization: `Bearer ${opts.apiKey}`, 'user-agent': 'assistant-bridge' };
    this.log = opts.logger ?? silentLogger;
    this.redact = keyRedactor(opts.apiKey);
    this.maxReplyChars = opts.maxReplyChars;
    this.maxFileBytes = opts.maxFileBytes;
    this.policy = retryPolicy(opts.retry, opts.sleep, opts.random);
    const notify = opts.onRetry;
    this.policy.onRetry = (err, attempt, waitMs) => {
      this.log.warn(
        {
          endpoint: err.details.endpoint,
          kind: err.kind,
          status: err.details.status,
          code: err.details.code,
          attempt,
          waitMs,
        },
        'upstream call failed, retrying',
      );
      notify?.(err, attempt, waitMs);
    };
  }

  /** A call answered with one JSON body (A1/B1, history, lists), retried per the policy. */
  async json(spec: CallSpec): Promise<JsonReply> {
    const call = linkAbort(spec.signal);
    try {
      return await withRetry(
        async () => {
          const res = await this.attempt(spec, call.signal);
          const limit =
            spec.reply && this.maxReplyChars !== undefined ? bytesForChars(this.maxReplyChars) : OTHER_BODY_LIMIT;
          let bytes: Uint8Array | undefined;
          try {
            bytes = await readBounded(res.body, limit, header(res.headers, 'content-length'));
          } catch (err) {
            if (call.signal.aborted) throw call.signal.reason;
            throw transportError(err, this.context(spec));
          }
          if (bytes === undefined) {
            // Not read on: aborting closes the connection, the rest is never received.
            call.abort();
            this.log.warn({ endpoint: spec.endpoint, limit }, 'upstream body too long, not read');
            if (spec.reply) return { body: undefined, headers: res.headers, tooLong: true as const };
            throw new ChatError('bad_request', `${spec.endpoint}: the upstream body is over ${limit} bytes`, {
              endpoint: spec.endpoint,
              code: 'BODY_TOO_LARGE',
            });
          }
          // TextDecoder, like undici's body.text(), drops a byte order mark.
          const text = new TextDecoder().decode(bytes);
          return { body: parseBody(text, header(res.headers, 'content-type')), headers: res.headers };
        },
        this.policy,
        call.signal,
      );
    } finally {
      call.unlink();
    }
  }

  /** A streamed call (A2/B2): resolves at the response headers, after retries. */
  async stream(spec: CallSpec): Promise<ChatStream> {
    const call = linkAbort(spec.signal);
    try {
      const res = await withRetry(() => this.attempt(spec, call.signal, STREAM_ACCEPT), this.policy, call.signal);
      return createChatStream({
        body: res.body,
        contentType: header(res.headers, 'content-type'),
        conversationId: header(res.headers, 'x-conversation-id'),
        abort: () => call.abort(),
        signal: spec.signal,
        endpoint: spec.endpoint,
        redact: this.redact,
        onClose: call.unlink,
        maxChars: this.maxReplyChars,
        maxFileBytes: this.maxFileBytes,
        decoder: spec.decoder,
      });
    } catch (err) {
      call.unlink();
      throw err;
    }
  }

  /** A one-response reply within maxReplyChars: the text that fits, and too_long if it did not. */
  boundReply(result: SendResult, tooLong: boolean): SendResult {
    const max = this.maxReplyChars;
    if (!tooLong && (max === undefined || result.text.length <= max)) return result;
    return { ...result, text: max === undefined ? result.text : cutText(result.text, max), endReason: 'too_long' };
  }

  async close(): Promise<void> {
    // Graceful first; streams a caller left open must not hold the process.
    const timer = setTimeout(() => void this.pool.destroy().catch(() => {}), 2_000);
    try {
      await this.pool.close();
    } catch {
      // destroyed meanwhile
    } finally {
      clearTimeout(timer);
    }
  }

  private context(spec: CallSpec): ErrorContext {
    return { endpoint: spec.endpoint, conversationSent: spec.conversationSent, redact: this.redact };
  }

  /** One try: the response with a 2xx status, or a ChatError / the abort reason. */
  private async attempt(spec: CallSpec, signal: AbortSignal, accept = 'application/json') {
    const started = Date.now();
    let res: Awaited<ReturnType<Pool['request']>>;
    try {
      res = await this.pool.request({
        method: spec.method,
        path: this.basePath + spec.path + queryString(spec.query),
        headers:
          spec.body === undefined
            ? { ...this.headers, accept }
            : { ...this.headers, accept, 'content-type': 'application/json' },
        ...(spec.body !== undefined ? { body: JSON.stringify(spec.body) } : {}),
        signal,
      });
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      const e = transportError(err, this.context(spec));
      this.log.debug({ endpoint: spec.endpoint, kind: e.kind, code: e.details.code }, 'upstream call failed');
      throw e;
    }
    this.log.debug({ endpoint: spec.endpoint, status: res.statusCode, ms: Date.now() - started }, 'upstream answered');
    if (res.statusCode >= 200 && res.statusCode < 300) {
      // A web page answering 200 (a wrong CHAT_API_URL: a site, a login page, a proxy's notice)
      // is never a reply: said as such, not relayed as the assistant's text. Not retried.
      if (/^\s*text\/html\b/i.test(header(res.headers, 'content-type') ?? '')) {
        await readLimited(res.body, ERROR_BODY_LIMIT);
        throw notChatApi(spec.endpoint, `answered ${res.statusCode} with an HTML page`, res.statusCode);
      }
      return res;
    }
    const text = await readLimited(res.body, ERROR_BODY_LIMIT);
    throw httpError(res.statusCode, res.headers, text, this.context(spec));
  }
}

function queryString(query: CallSpec['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const s = params.toString();
  return s === '' ? '' : `?${s}`;
}

/** The start of an error body; a body that fails or goes on is cut (its socket is not reused then). */
async function readLimited(body: AsyncIterable<Uint8Array>, limit: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size >= limit) break;
    }
  } catch {
    // the status is what matters
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A whole body of at most `limit` bytes, or undefined as soon as it is known to be longer (by its
 * Content-Length or by counting): the rest is not read, so a huge body never sits in memory.
 */
async function readBounded(
  body: AsyncIterable<Uint8Array>,
  limit: number,
  contentLength: string | undefined,
): Promise<Uint8Array | undefined> {
  if (contentLength !== undefined && Number(contentLength) > limit) return undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** One controller per call: aborted by the caller's signal or by ChatStream.cancel(). */
function linkAbort(external: AbortSignal | undefined) {
  const controller = new AbortController();
  const onAbort = () => controller.abort(external?.reason);
  if (external?.aborted) onAbort();
  else external?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    abort: () => controller.abort(),
    unlink: () => external?.removeEventListener('abort', onAbort),
  };
}

export interface RetryOptions {
  /** Tries in all for 5xx and connection failures (default 3). */
  maxTries?: number;
  /** Longest total wait for 429s (default 30000 ms). */
  rateLimitBudgetMs?: number;
  /** First backoff step (default 500 ms); doubles per try, capped at 8 s. */
  baseDelayMs?: number;
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RetryPolicy {
  maxTries: number;
  rateLimitBudgetMs: number;
  baseDelayMs: number;
  sleep: Sleep;
  random: () => number;
  onRetry?: (err: ChatError, attempt: number, waitMs: number) => void;
}

const MAX_DELAY_MS = 8_000;
/** A `Retry-After: 0` still waits this long, so a server that always says 0 cannot spin us. */
const MIN_RATE_LIMIT_WAIT_MS = 100;

export function retryPolicy(
  opts: RetryOptions = {},
  sleep: Sleep = abortableSleep,
  random: () => number = Math.random,
): RetryPolicy {
  return {
    maxTries: Math.max(1, opts.maxTries ?? 3),
    rateLimitBudgetMs: Math.max(0, opts.rateLimitBudgetMs ?? 30_000),
    baseDelayMs: Math.max(0, opts.baseDelayMs ?? 500),
    sleep,
    random,
  };
}

export async function withRetry<T>(attempt: () => Promise<T>, policy: RetryPolicy, signal?: AbortSignal): Promise<T> {
  let failures = 0; // 5xx / network
  let rateLimited = 0;
  let waitedForRateLimit = 0;
  for (let n = 1; ; n++) {
    signal?.throwIfAborted();
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof ChatError)) throw err;
      let wait: number;
      if (err.kind === 'rate_limited') {
        const hinted = err.details.retryAfterMs;
        wait = Math.max(MIN_RATE_LIMIT_WAIT_MS, hinted ?? backoff(policy, rateLimited));
        rateLimited++;
        if (waitedForRateLimit + wait > policy.rateLimitBudgetMs) throw err;
        waitedForRateLimit += wait;
      } else if (err.kind === 'server' || err.kind === 'network') {
        failures++;
        if (failures >= policy.maxTries) throw err;
        wait = backoff(policy, failures - 1);
      } else {
        throw err;
      }
      policy.onRetry?.(err, n, wait);
      await policy.sleep(wait, signal);
    }
  }
}

/** Full jitter: uniform in [0, min(cap, base·2^step)). */
function backoff(policy: RetryPolicy, step: number): number {
  return Math.floor(policy.random() * Math.min(MAX_DELAY_MS, policy.baseDelayMs * 2 ** step));
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
