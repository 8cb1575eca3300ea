import type { IncomingMessage, ServerResponse } from 'node:http';
import { type App, HTTPModuleFunctions as http, HTTPResponseAck, type Receiver } from '@slack/bolt';
import type { BoltLogger } from './bolt-logger.js';

// HTTP mode: the Events API request listener, mounted on the bridge's own server at
// /slack/events. Bolt's HTTPReceiver wants to own a server and a port; this receiver only
// verifies (v0 signature, 5-minute window: bad, missing or stale → 401 and nothing else),
// answers url_verification, and hands events to the app, which acks before any listener runs.

export interface EventsReceiverOptions {
  signingSecret: string;
  logger: BoltLogger;
  /** Injected so tests can check the staleness window. */
  now?: () => number;
}

export class EventsReceiver implements Receiver {
  private app: App | undefined;
  private accepting = false;

  constructor(private readonly opts: EventsReceiverOptions) {}

  init(app: App): void {
    this.app = app;
  }

  async start(): Promise<void> {
    this.accepting = true;
  }

  async stop(): Promise<void> {
    this.accepting = false;
  }

  readonly requestListener = (req: IncomingMessage, res: ServerResponse): void => {
    void this.handle(req, res);
  };

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { logger } = this.opts;
    if (req.method !== 'POST') return http.buildNoBodyResponse(res, 405);
    // Stopping: Slack retries what it could not deliver, to the next process.
    if (!this.accepting || !this.app) return http.buildNoBodyResponse(res, 503);
    let buffered: Awaited<ReturnType<typeof http.parseAndVerifyHTTPRequest>>;
    try {
      buffered = await http.parseAndVerifyHTTPRequest(
        {
          signingSecret: this.opts.signingSecret,
          logger,
          ...(this.opts.now ? { nowMilliseconds: this.opts.now } : {}),
        },
        req,
      );
    } catch (err) {
      if (http.isRawBodyError(err) && err.statusCode === 413) return http.buildNoBodyResponse(res, 413);
      logger.warn(`Slack request refused: ${(err as Error).message}`);
      return http.buildNoBodyResponse(res, 401);
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Slack request bodies are untyped JSON
    let body: any;
    try {
      body = http.parseHTTPRequestBody(buffered);
    } catch {
      return http.buildNoBodyResponse(res, 400);
    }
    if (body.ssl_check === '1') return http.buildSSLCheckResponse(res);
    if (body.type === 'url_verification') return http.buildUrlVerificationResponse(res, body);
    const ack = new HTTPResponseAck({
      logger,
      processBeforeResponse: false,
      unhandledRequestTimeoutMillis: 3001,
      httpRequest: buffered,
      httpRequestBody: body,
      httpResponse: res,
    });
    const retryNum = http.extractRetryNumFromHTTPRequest(req);
    const retryReason = http.extractRetryReasonFromHTTPRequest(req);
    try {
      await this.app.processEvent({
        body,
        ack: ack.bind(),
        ...(retryNum !== undefined ? { retryNum } : {}),
        ...(retryReason !== undefined ? { retryReason } : {}),
      });
    } catch (err) {
      logger.error(`Slack event processing failed: ${(err as Error).message}`);
      if (!res.headersSent) http.buildNoBodyResponse(res, 500);
    }
  }
}
