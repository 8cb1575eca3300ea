import { AsyncLocalStorage } from 'node:async_hooks';
import {
  App,
  type Authorize,
  type AuthorizeResult,
  type InstallationQuery,
  type Logger as SlackLogger,
  LogLevel,
  type Receiver,
  type ReceiverEvent,
  SocketModeReceiver,
} from '@slack/bolt';
import { type Logger, scrubSecrets } from '../../logger.js';
import { hasRoutableEvent } from './events.js';
import { EventsReceiver } from './http-receiver.js';

// The Bolt app, everything Bolt itself runs for an event: its receiver (Socket Mode when an app
// token is set, else the Events API over the bridge's HTTP server), its logger, its authorize,
// and acks that wait until the event's message has joined its place's queue (OrderedAckApp, below).
// Web API errors, 429s included, reach the caller at once (rejectRateLimitedCalls, no retries):
// the core's scheduler decides when to try again.

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

// Bolt and its clients log through this: pino underneath, secrets scrubbed from free text.

/** Bolt's logger interface (@slack/logger), as Bolt, its receivers and the OAuth installer take it. */
export type BoltLogger = SlackLogger;

const logText = (msg: unknown[]) =>
  scrubSecrets(
    msg.map((m) => (m instanceof Error ? m.message : typeof m === 'string' ? m : JSON.stringify(m))).join(' '),
  );

export function boltLogger(logger: Logger): BoltLogger {
  let level = LogLevel.INFO;
  return {
    // Bolt's debug output includes request bodies (message text): pino's debug only.
    debug: (...m) => logger.isLevelEnabled('debug') && logger.debug({ bolt: true }, logText(m)),
    info: (...m) => logger.info({ bolt: true }, logText(m)),
    warn: (...m) => logger.warn({ bolt: true }, logText(m)),
    error: (...m) => logger.error({ bolt: true }, logText(m)),
    setLevel: (l) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}

/** The bot's own ids in single-workspace mode, from auth.test at start. */
export interface BotIdentityOfToken {
  teamId: string;
  botUserId: string;
  botId: string | undefined;
}

/**
 * Which token answers an event (Bolt asks before every event's listeners) or a reply's write:
 * the installation's in OAuth mode, else SLACK_BOT_TOKEN with the ids auth.test gave at start.
 */
export function authorizer(opts: {
  botToken: string | undefined;
  /** The bot's ids, once auth.test answered at start. */
  bot: { readonly identity: BotIdentityOfToken | undefined };
  installer?: { authorize(source: InstallationQuery<boolean>): Promise<AuthorizeResult> } | undefined;
}): Authorize<boolean> {
  const { botToken, installer } = opts;
  return async (source) => {
    if (installer) return installer.authorize(source as InstallationQuery<boolean>);
    const identity = opts.bot.identity;
    if (!identity || !botToken) throw new Error('Slack connector not started');
    const result: AuthorizeResult = {
      botToken,
      botUserId: identity.botUserId,
      teamId: identity.teamId,
      ...(identity.botId ? { botId: identity.botId } : {}),
    };
    return result;
  };
}

// Bolt acks an Events API event before any listener runs. With several replicas that is too
// early: Slack (and a test's sender) may deliver the place's next message to another replica the
// moment the ack leaves, and that one could take the place before this message is in its queue.
// So an event's ack waits until what its listeners start is recorded (ackAfter: the message has
// joined its place's queue), then leaves as before. Messages whose events were acked one after
// another are answered in that order, whichever replicas took them. Nothing else changes: a
// listener that fails still has its event acked, and a slow record is waited for only so long.
// Requests a listener acks (interactions, commands) that no listener took are acked when Bolt is
// done with them: every signed request is answered well within Slack's 3 s.

/** Longest an ack waits for what its listeners recorded; Slack retries after 3 s without one. */
export const ACK_HOLD_MAX_MS = 1500;
/** Listeners run right after Bolt's ack; past this, the ack leaves with the holds seen so far. */
const LISTENERS_MAX_MS = 250;

const holds = new AsyncLocalStorage<Array<Promise<unknown>>>();

/** Called from an event's listener: its ack leaves only once `recorded` settles. */
export function ackAfter(recorded: Promise<unknown>): void {
  holds.getStore()?.push(recorded);
}

const within = (ms: number, p: Promise<unknown>) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    void p.then(
      () => (clearTimeout(timer), resolve()),
      () => (clearTimeout(timer), resolve()),
    );
  });

/**
 * Longest an ack waits for Bolt to ask for it. Bolt asks right after authorize, before any
 * listener, or never: a body it cannot type, an authorize that throws before it, a
 * `function_executed` no listener acks. The ack then leaves anyway.
 */
const ACK_ASK_MAX_MS = 1000;

/** Bolt's App, with Events API acks sent once what the event's listeners started is recorded. */
export class OrderedAckApp extends App {
  override async processEvent(event: ReceiverEvent): Promise<void> {
    // Interactions and commands hand ack to their listeners; only events are acked by Bolt itself.
    if (event.body.type !== 'event_callback') return this.processRequest(event);
    // Nothing to route (the HTTP receiver answers 400 before this; Socket Mode acks the envelope).
    if (!hasRoutableEvent(event.body)) return event.ack();
    const recorded: Array<Promise<unknown>> = [];
    let ackAsked = false;
    let asked: () => void = () => {};
    const askedNow = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const processed = holds.run(recorded, () =>
      super.processEvent({
        ...event,
        ack: () => {
          ackAsked = true;
          asked();
          return Promise.resolve();
        },
      }),
    );
    try {
      // Bolt asks before any listener runs, or never: a processing that ends without asking is
      // not waited past its end, and an ask that does not come is not waited for long.
      await within(ACK_ASK_MAX_MS, Promise.race([askedNow, processed]));
      if (ackAsked) {
        await within(LISTENERS_MAX_MS, processed);
        await within(ACK_HOLD_MAX_MS, Promise.allSettled(recorded));
      }
    } finally {
      await event.ack();
    }
    await processed;
  }

  /**
   * An interaction, shortcut, slash command or options request: its listener acks it. Bolt runs
   * every listener before it returns; one that no listener took (or none acked) is acked then, at
   * once, instead of waiting for the receiver's 404 after Slack's 3 s (the user sees an error).
   */
  private async processRequest(event: ReceiverEvent): Promise<void> {
    let acked = false;
    await super.processEvent({
      ...event,
      ack: (response?: unknown) => {
        acked = true;
        return event.ack(response);
      },
    });
    if (!acked) await event.ack();
  }
}
