import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import {
  type App,
  type Logger as BoltLogger,
  HTTPModuleFunctions as http,
  HTTPResponseAck,
  type Receiver,
} from '@slack/bolt';
import { hasRoutableEvent } from './events.js';

// HTTP mode: the Events API request listener, mounted on the bridge's own server at
// /slack/events. Interactions (block actions, form-encoded `payload=`) and slash commands come in
// on the same listener when the app's Request URLs point here. Bolt's HTTPReceiver wants to own a
// server and a port, and reads the whole body before it looks at the signature; this receiver
// checks the signature headers and the timestamp (5 minutes either way) before it reads a byte,
// reads at most maxBodyBytes, then verifies the v0 HMAC and hands the event to the app, which
// acks before any listener runs.
//
// Answers: 405 not POST, 503 stopping (events only, from closeEvents() on), 401 signature headers
// missing/malformed/stale or HMAC wrong, 413 body over the limit, 400 body not a JSON object (or
// a form with one) or an event_callback without an event object, 200 otherwise (also for events
// no listener takes).
// Refusals close the connection; nothing more of the body is read.

/** Slack's own bodies are far smaller; this is what the port accepts at most. */
export const SLACK_MAX_BODY_BYTES = 1024 * 1024;
/** Slack's replay window, applied both ways (a clock ahead is as suspect as one behind). */
export const SIGNATURE_WINDOW_SECONDS = 5 * 60;
/** closeEvents() waits this long at most for the requests being handled: Slack gives up after 3 s. */
export const EVENTS_STOP_WAIT_MS = 3_500;

export interface EventsReceiverOptions {
  signingSecret: string;
  logger: BoltLogger;
  /** Injected so tests can check the staleness window and the refusal log interval. */
  now?: () => number;
  /** Default SLACK_MAX_BODY_BYTES. */
  maxBodyBytes?: number;
  /** Refused requests are logged at most once per this interval, with a count. Default 60000. */
  refusalLogIntervalMs?: number;
}

type Refusal = 'no_signature' | 'bad_signature_header' | 'stale_timestamp' | 'bad_signature';

export class EventsReceiver implements Receiver {
  private app: App | undefined;
  private accepting = false;
  /** SIGTERM: events are refused with 503 (Slack retries them, elsewhere); interactions still work. */
  private refusingEvents = false;
  private readonly answering = new Set<Promise<void>>();
  private readonly now: () => number;
  private readonly maxBodyBytes: number;
  private readonly refusals: RefusalLog;
  /** The listener to mount; it tells the server its body limit (refused by Content-Length up front). */
  readonly requestListener: ((req: IncomingMessage, res: ServerResponse) => void) & { maxBodyBytes: number };

  constructor(private readonly opts: EventsReceiverOptions) {
    this.now = opts.now ?? Date.now;
    this.maxBodyBytes = opts.maxBodyBytes ?? SLACK_MAX_BODY_BYTES;
    this.refusals = new RefusalLog(opts.logger, this.now, opts.refusalLogIntervalMs ?? 60_000);
    const listener = (req: IncomingMessage, res: ServerResponse): void => {
      // Until it is answered, a request holds up closeEvents() (bounded).
      const answered = new Promise<void>((resolve) => res.once('close', resolve));
      this.answering.add(answered);
      void answered.then(() => this.answering.delete(answered));
      // Whatever goes wrong in here is answered here: never an unhandled rejection.
      this.handle(req, res).catch((err: unknown) => {
        opts.logger.error(`Slack request failed: ${err instanceof Error ? err.message : String(err)}`);
        if (!res.headersSent) refuse(res, 500);
        else res.destroy();
      });
    };
    this.requestListener = Object.assign(listener, { maxBodyBytes: this.maxBodyBytes });
  }

  init(app: App): void {
    this.app = app;
  }

  async start(): Promise<void> {
    this.accepting = true;
  }

  async stop(): Promise<void> {
    this.accepting = false;
  }

  /**
   * The first step of SIGTERM: from now on an Events API event is answered 503, never acked and
   * then dropped, so Slack delivers it again (to another replica, once this one's /readyz says
   * 503). Interactions (a Stop click on a reply being finished) are still taken. Resolves once
   * every request already being handled has been answered, or after EVENTS_STOP_WAIT_MS.
   */
  async closeEvents(): Promise<void> {
    this.refusingEvents = true;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, EVENTS_STOP_WAIT_MS)));
    await Promise.race([Promise.allSettled([...this.answering]), bound]).finally(() => clearTimeout(timer));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { logger } = this.opts;
    if (req.method !== 'POST') return refuse(res, 405);
    // Stopping: Slack retries what it could not deliver, to the next process.
    if (!this.accepting || !this.app) return refuse(res, 503);

    // 1. The headers, before any of the body is read.
    const signature = singleHeader(req, 'x-slack-signature');
    const timestamp = singleHeader(req, 'x-slack-request-timestamp');
    if (signature === undefined || timestamp === undefined) return this.unauthorized(res, 'no_signature');
    if (!/^v0=[0-9a-f]{64}$/.test(signature) || !/^\d{1,12}$/.test(timestamp)) {
      return this.unauthorized(res, 'bad_signature_header');
    }
    if (Math.abs(this.now() / 1000 - Number(timestamp)) > SIGNATURE_WINDOW_SECONDS) {
      return this.unauthorized(res, 'stale_timestamp');
    }

    // 2. The body, counted as it comes (the server already refused a declared length over the limit).
    const body = await readBody(req, this.maxBodyBytes);
    if (body === 'too_large') return refuse(res, 413);
    if (body === 'aborted') return; // the client went away (or the server's body deadline answered)

    // 3. The HMAC over exactly those bytes.
    const expected = createHmac('sha256', this.opts.signingSecret)
      .update(`v0:${timestamp}:`)
      .update(body)
      .digest('hex');
    if (!timingSafeEqual(Buffer.from(`v0=${expected}`), Buffer.from(signature))) {
      return this.unauthorized(res, 'bad_signature');
    }

    // 4. A signed body must still be what Slack sends: a JSON object, or a form (with one in `payload`).
    const parsed = parseSlackBody(body, req.headers['content-type']);
    if (parsed === undefined) return refuse(res, 400);
    if (parsed.ssl_check === '1') return http.buildSSLCheckResponse(res);
    if (parsed.type === 'url_verification') return http.buildUrlVerificationResponse(res, parsed);
    // An event callback without an event routes nowhere, and Bolt would never ask for its ack.
    if (parsed.type === 'event_callback' && !hasRoutableEvent(parsed)) return refuse(res, 400);
    if (this.refusingEvents && parsed.type === 'event_callback') return refuse(res, 503);

    // Bolt's ack helper wants the buffered request it would have made itself.
    const buffered = Object.assign(req, { rawBody: body });
    const ack = new HTTPResponseAck({
      logger,
      processBeforeResponse: false,
      unhandledRequestTimeoutMillis: 3001,
      httpRequest: buffered,
      httpRequestBody: parsed,
      httpResponse: res,
    });
    const retryNum = http.extractRetryNumFromHTTPRequest(req);
    const retryReason = http.extractRetryReasonFromHTTPRequest(req);
    try {
      await this.app.processEvent({
        body: parsed,
        ack: ack.bind(),
        ...(retryNum !== undefined && !Number.isNaN(retryNum) ? { retryNum } : {}),
        ...(retryReason !== undefined ? { retryReason } : {}),
      });
    } catch (err) {
      logger.error(`Slack event processing failed: ${(err as Error).message}`);
      if (!res.headersSent) refuse(res, 500);
    }
  }

  private unauthorized(res: ServerResponse, reason: Refusal): void {
    this.refusals.note(reason);
    refuse(res, 401);
  }
}

/** An answer without a body; the connection closes after it unless the request was read in full. */
function refuse(res: ServerResponse, status: number): void {
  res.writeHead(status, status >= 400 ? { connection: 'close', 'content-length': 0 } : { 'content-length': 0 });
  res.end();
}

function singleHeader(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

/**
 * The body, or 'too_large' as soon as more than `max` bytes arrived (the rest is left unread), or
 * 'aborted' when the request ended early.
 */
export function readBody(req: IncomingMessage, max: number): Promise<Buffer | 'too_large' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (result: Buffer | 'too_large' | 'aborted') => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
      if (result === 'too_large') req.pause();
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) return done('too_large');
      chunks.push(chunk);
    };
    const onEnd = () => done(Buffer.concat(chunks, size));
    const onAbort = () => done('aborted');
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onAbort);
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Slack request bodies are untyped JSON
type SlackBody = Record<string, any>;

/**
 * Slack's body: JSON (events), or a form (slash commands; interactions put their JSON in
 * `payload`). Undefined when it is neither, or when what it holds is not an object with a type
 * (`null`, an array, a number, a form without `payload` or `command`).
 */
export function parseSlackBody(raw: Buffer, contentType: string | undefined): SlackBody | undefined {
  const text = raw.toString('utf8');
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  let value: unknown;
  try {
    if (mediaType === 'application/x-www-form-urlencoded') {
      const form = parseQuery(text);
      if (form.ssl_check === '1') return { ssl_check: '1' };
      if (form.payload !== undefined) {
        if (typeof form.payload !== 'string') return undefined;
        value = JSON.parse(form.payload);
      } else value = form;
    } else {
      value = JSON.parse(text);
    }
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const body = value as SlackBody;
  return typeof body.type === 'string' || typeof body.command === 'string' ? body : undefined;
}

/**
 * Refused requests, logged at most once per interval with how many there were since the last
 * line: a flood of forged requests must not become a flood of log lines.
 */
export class RefusalLog {
  private lastLogged: number | undefined;
  private counts = new Map<Refusal, number>();

  constructor(
    private readonly logger: BoltLogger,
    private readonly now: () => number,
    private readonly intervalMs: number,
  ) {}

  note(reason: Refusal): void {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
    const t = this.now();
    if (this.lastLogged !== undefined && t - this.lastLogged < this.intervalMs && t >= this.lastLogged) return;
    const total = [...this.counts.values()].reduce((a, b) => a + b, 0);
    const detail = [...this.counts].map(([r, n]) => `${r}: ${n}`).join(', ');
    const since = this.lastLogged === undefined ? '' : ` in the last ${Math.round((t - this.lastLogged) / 1000)} s`;
    this.logger.warn(`Slack requests refused with 401: ${total}${since} (${detail})`);
    this.lastLogged = t;
    this.counts = new Map();
  }
}
