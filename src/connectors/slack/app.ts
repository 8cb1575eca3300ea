import { type Authorize, type Receiver, SocketModeReceiver } from '@slack/bolt';
import { OrderedAckApp } from './ack-order.js';
import type { BoltLogger } from './bolt-logger.js';
import { EventsReceiver } from './http-receiver.js';

// The Bolt app and its receiver: Socket Mode when an app token is set, else the Events API
// over the bridge's HTTP server. Web API errors, 429s included, reach the caller at once
// (rejectRateLimitedCalls, no retries): the core's scheduler decides when to try again.

export interface BoltAppOptions {
  apiUrl: string;
  appToken: string | undefined;
  signingSecret: string | undefined;
  authorize: Authorize<boolean>;
  logger: BoltLogger;
  now?: () => number;
  /** Socket Mode: ping timeout, also the reconnect back-off step (Bolt's default 5000 ms). */
  socketPingTimeoutMs?: number;
}

export interface BoltApp {
  app: OrderedAckApp;
  mode: 'socket' | 'http';
  /** HTTP mode: the POST /slack/events listener. */
  events: EventsReceiver | undefined;
  socket: SocketModeReceiver | undefined;
}

export function clientOptions(apiUrl: string) {
  return { slackApiUrl: apiUrl, rejectRateLimitedCalls: true, retryConfig: { retries: 0 } };
}

export function createBoltApp(opts: BoltAppOptions): BoltApp {
  let receiver: Receiver;
  let events: EventsReceiver | undefined;
  let socket: SocketModeReceiver | undefined;
  if (opts.appToken) {
    socket = new SocketModeReceiver({
      appToken: opts.appToken,
      logger: opts.logger,
      // Not an installer: this is how SocketModeReceiver passes client options to its
      // apps.connections.open client, so that call goes to SLACK_API_URL too.
      installerOptions: { clientOptions: { slackApiUrl: opts.apiUrl } },
      ...(opts.socketPingTimeoutMs ? { clientPingTimeout: opts.socketPingTimeoutMs } : {}),
    });
    receiver = socket;
  } else {
    if (!opts.signingSecret) throw new Error('SLACK_SIGNING_SECRET is required in Slack HTTP mode');
    events = new EventsReceiver({
      signingSecret: opts.signingSecret,
      logger: opts.logger,
      ...(opts.now ? { now: opts.now } : {}),
    });
    receiver = events;
  }
  const app = new OrderedAckApp({
    receiver,
    authorize: opts.authorize,
    logger: opts.logger,
    clientOptions: clientOptions(opts.apiUrl),
    ignoreSelf: true,
  });
  return { app, mode: socket ? 'socket' : 'http', events, socket };
}
