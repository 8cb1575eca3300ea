import { forwardedClient } from './forwarded-client.js';
import type { IncomingMessage as HttpRequest, ServerResponse } from 'node:http';
import { type App, type InstallationQuery, webApi } from '@slack/bolt';
import type { SlackConfig } from '../../config/config.js';
import type { Connector, RateLimitObserver, ReplyTarget } from '../../core/ports.js';
import { ignoreRateLimits } from '../../core/ports.js';
import { type Logger, scrubSecrets } from '../../logger.js';
import { authorizer, type BoltApp, boltLogger, clientOptions, createBoltApp } from './app.js';
import { AgentSessions, registerSessionStop } from './agent-sessions.js';
import { Greetings, registerAgentHome, Viewing } from './agent-home.js';
import { createAssistant } from './assistant.js';
import { registerControlActions, textBlocks } from './controls.js';
import { createInstallationStore, type Installations } from './installation-store.js';
import { type IntakeDeps, intake, listenForMessages, relayHandle, UserNames } from './intake.js';
import { ThreadMembership } from './thread-membership.js';
import { createOAuth, INSTALL_PATH, REDIRECT_PATH, type SlackOAuth } from './oauth.js';
import type { OAuthStates } from './oauth-state.js';
import { DEFAULT_SLACK_LIMITS, type SlackLimits, translateSlackError } from './rate-limits.js';
import { renderMarkdownText, renderMrkdwn } from './render.js';
import { PlaceSerial } from '../../core/intake/place-order.js';
import { SeenMessages } from '../../core/reply/thread-context.js';
import { HistoryReads, type ReadScheduler } from './history-reads.js';

export const EVENTS_PATH = '/slack/events';
/** How long closeIntake waits for Slack to answer the Socket Mode close frame. */
const STOP_RECEIVING_WAIT_MS = 1000;

export interface HttpMounter {
  mount(pathPrefix: string, listener: (req: HttpRequest, res: ServerResponse) => void | Promise<void>): void;
}

export interface SlackConnectorOptions {
  config: SlackConfig;
  logger: Logger;
  /** The core scheduler, for 429s met outside a sink write. */
  rateLimits?: RateLimitObserver;
  /**
   * The core scheduler again, for the history reads the connector makes itself (thread
   * membership, the Messages tab greeting): paid from the history bucket. Absent: unbudgeted.
   */
  scheduler?: ReadScheduler;
  /** OAuth mode: where installations are kept (store.installations). */
  installations?: Installations;
  /**
   * OAuth mode: where install links' states are kept; the store's, so that Slack's redirect may
   * reach any replica. Default: this process's memory.
   */
  oauthStates?: OAuthStates;
  /** The bridge's HTTP server: HTTP mode mounts /slack/events, OAuth mounts its two paths. */
  http?: HttpMounter;
  /** Budgets assumed per Slack method family; tests shrink the windows. */
  limits?: Partial<SlackLimits>;
  /** Socket Mode ping timeout and reconnect back-off step; tests shorten it. */
  socketPingTimeoutMs?: number;
  now?: () => number;
  /** ATTACHMENT_MAX_BYTES: the largest text-like file passed on (default 200000). */
  attachmentMaxBytes?: number;
}

export interface SlackConnector extends Connector {
  /** Identity of the single-workspace bot, once started (undefined in OAuth mode). */
  readonly identity: { teamId: string; botUserId: string; botId: string | undefined } | undefined;
  /** Resolves when every event received so far has been handed to the relay (tests). */
  idle(): Promise<void>;
  closeIntake(): Promise<void>;
}

export function createSlackConnector(opts: SlackConnectorOptions): SlackConnector {
  const { config } = opts;
  // The caller names the component (componentLogger(root, 'slack')).
  const logger = opts.logger;
  const blog = boltLogger(logger);
  const now = opts.now ?? Date.now;
  const limits: SlackLimits = { ...DEFAULT_SLACK_LIMITS, ...opts.limits };
  const rateLimits = opts.rateLimits ?? ignoreRateLimits;
  const relay = relayHandle();
  // Set at start from auth.test (single-workspace mode); authorize reads it for every event.
  const bot: { identity: SlackConnector['identity'] } = { identity: undefined };
  let started = false;
  const oauth = openOAuth(opts, now, blog);
  const installer = oauth?.installer;
  const authorize = authorizer({ botToken: config.botToken, bot, installer });
  const bolt: BoltApp = createBoltApp({
    apiUrl: config.apiUrl,
    appToken: config.appToken,
    signingSecret: config.signingSecret,
    authorize,
    logger: blog,
    now,
    ...(opts.socketPingTimeoutMs ? { socketPingTimeoutMs: opts.socketPingTimeoutMs } : {}),
  });
  const { app } = bolt;
  reportRateLimits(app, rateLimits, logger);
  const socket = watchSocket(bolt, logger);
  const reads = new HistoryReads(limits, opts.scheduler);
  const intake = intakeDeps(opts, { limits, reads, relay, rateLimits, now });
  registerListeners(app, intake, { logger, reads, installations: installer ? opts.installations : undefined, now });
  const mountRoutes = routesMounter(bolt, oauth, opts.http);
  const clientFor = replyClient(config, installer ? undefined : config.botToken, authorize, blog);

  return {
    platform: 'slack',
    get identity() {
      return bot.identity;
    },
    async start(h) {
      if (config.botToken) {
        // The readiness check of HTTP mode, and the bot's own ids for mention handling.
        const res = await app.client.auth.test({ token: config.botToken });
        bot.identity = { teamId: res.team_id ?? '', botUserId: res.user_id ?? '', botId: res.bot_id };
      }
      mountRoutes();
      started = true;
      relay.set(h);
      await app.start();
      if (bolt.socket) socket.up = true;
      logger.info({ mode: bolt.mode, oauth: Boolean(oauth), streaming: config.streaming }, 'Slack connector started');
    },
    async closeIntake() {
      if (!started) return;
      // HTTP mode: new events are answered 503 (Slack retries them elsewhere), not acked and refused.
      if (!bolt.socket) return bolt.events?.closeEvents();
      await socket.closeIntake();
    },
    async shutdown() {
      started = false;
      relay.set(undefined);
      try {
        // Socket Mode: the receiver's stop is the socket's disconnect, maybe already under way.
        await (socket.closing ?? app.stop());
      } catch (err) {
        logger.warn({ err: scrubSecrets(String(err)) }, 'Slack app did not stop cleanly');
      }
      socket.up = false;
    },
    isReady: () => started && (bolt.socket ? socket.up : true),
    ...interruptedWrites(clientFor),
    idle: () => intake.serial.idle(),
  };
}

/** OAuth mode (no SLACK_BOT_TOKEN): the installer and its two routes; undefined with a token. */
function openOAuth(opts: SlackConnectorOptions, now: () => number, blog: ReturnType<typeof boltLogger>) {
  const { config } = opts;
  if (config.botToken) return undefined;
  if (!config.oauth) throw new Error('Slack needs SLACK_BOT_TOKEN or the OAuth variables');
  if (!opts.installations) throw new Error('Slack OAuth mode needs the installation store');
  return createOAuth({
    ...config.oauth,
    installationStore: createInstallationStore(opts.installations, now),
    apiUrl: config.apiUrl,
    logger: blog,
    ...(opts.oauthStates ? { states: opts.oauthStates } : {}),
    clientOf: forwardedClient(config.trustProxy),
  });
}

function reportRateLimits(app: App, rateLimits: RateLimitObserver, logger: Logger): void {
  app.client.on(webApi.WebClientEvent.RATE_LIMITED, (retrySec: number, { url }: { url: string }) => {
    // Sinks report their own 429s (as PlatformRateLimitedError, with the right bucket); the
    // other calls (users.info, conversations.replies, reactions) are told to the scheduler here.
    const method = url.split('/').pop() ?? '';
    if (method.startsWith('chat.')) return;
    logger.warn({ method, retrySec }, 'Slack rate limit');
    rateLimits.limited(`slack:api:${method}`, retrySec * 1000);
  });
}

/** Socket Mode's connection: up or not (readiness), and its close (closeIntake, shutdown). */
function watchSocket(bolt: BoltApp, logger: Logger) {
  const state = {
    up: false,
    closing: undefined as Promise<void> | undefined,
    close(): Promise<void> {
      const socket = bolt.socket;
      if (!socket) return Promise.resolve();
      state.closing ??= socket.client.disconnect().catch((err: unknown) => {
        logger.warn({ err: scrubSecrets(String(err)) }, 'Slack Socket Mode did not close cleanly');
      });
      return state.closing;
    },
    async closeIntake(): Promise<void> {
      state.up = false;
      // Once the close frame is sent Slack sends nothing more here; its answer is awaited only
      // briefly, since a peer that never answers would hold the shutdown for 30 s.
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, STOP_RECEIVING_WAIT_MS);
      });
      await Promise.race([state.close(), bound]).finally(() => clearTimeout(timer));
      logger.info("Slack Socket Mode connection closing: the app's other connections get the new events");
    },
  };
  bolt.socket?.client.on('connected', () => {
    state.up = true;
  });
  bolt.socket?.client.on('disconnected', () => {
    state.up = false;
  });
  bolt.socket?.client.on('reconnecting', () => {
    state.up = false;
  });
  return state;
}

function intakeDeps(
  opts: SlackConnectorOptions,
  o: {
    limits: SlackLimits;
    reads: HistoryReads;
    relay: ReturnType<typeof relayHandle>;
    rateLimits: RateLimitObserver;
    now: () => number;
  },
): IntakeDeps {
  const { logger } = opts;
  return {
    config: opts.config,
    limits: o.limits,
    logger,
    threads: new ThreadMembership(logger, o.now, undefined, o.reads),
    users: new UserNames(o.now),
    serial: new PlaceSerial(),
    seen: new SeenMessages(o.now),
    sessions: new AgentSessions({ logger, rateLimits: o.rateLimits }),
    viewing: new Viewing(o.now),
    ...(opts.attachmentMaxBytes !== undefined ? { attachmentMaxBytes: opts.attachmentMaxBytes } : {}),
    handler: o.relay.handler,
    now: o.now,
  };
}

/** Mounts HTTP mode's /slack/events and OAuth's two paths on the bridge's server, once (at start). */
function routesMounter(bolt: BoltApp, oauth: SlackOAuth | undefined, http: HttpMounter | undefined): () => void {
  let mounted = false;
  return () => {
    if (mounted) return;
    mounted = true;
    if (bolt.events) {
      if (!http) throw new Error('Slack HTTP mode needs the HTTP server to mount /slack/events');
      http.mount(EVENTS_PATH, bolt.events.requestListener);
    }
    if (oauth) {
      if (!http) throw new Error('Slack OAuth needs the HTTP server to mount /slack/install');
      http.mount(INSTALL_PATH, oauth.listener);
      http.mount(REDIRECT_PATH, oauth.listener);
    }
  };
}

/** The client that writes in a reply's workspace: the single token, or the installation's. */
function replyClient(
  config: SlackConfig,
  singleToken: string | undefined,
  authorize: ReturnType<typeof authorizer>,
  blog: ReturnType<typeof boltLogger>,
): (target: ReplyTarget) => Promise<webApi.WebClient> {
  return async (target) => {
    // With a single-workspace token no identity is needed: crash repair (markInterrupted) runs
    // before start(), so that no reply of the new run is mistaken for one of the last.
    let token = singleToken;
    if (token === undefined) {
      const enterpriseId = typeof target.data?.enterpriseId === 'string' ? target.data.enterpriseId : undefined;
      const auth = await authorize({
        teamId: target.place.workspaceId ?? '',
        enterpriseId,
        isEnterpriseInstall: false,
      });
      token = auth.botToken;
    }
    if (!token) throw new Error(`no Slack bot token for ${target.place.workspaceId ?? '-'}`);
    return new webApi.WebClient(token, { ...clientOptions(config.apiUrl), logger: blog });
  };
}

/** Crash repair: a reply a crash interrupted is marked so, or said in its place. */
function interruptedWrites(
  clientFor: (target: ReplyTarget) => Promise<webApi.WebClient>,
): Pick<Connector, 'markInterrupted' | 'postInterrupted'> {
  return {
    async markInterrupted(target, messageId, text) {
      const client = await clientFor(target);
      try {
        if (target.data?.mode === 'native') {
          // A stream left open by a crash: close it (Slack may have already), then set the text.
          await client.chat.stopStream({ channel: target.place.channelId, ts: messageId }).catch(() => undefined);
          await client.chat.update({
            channel: target.place.channelId,
            ts: messageId,
            markdown_text: renderMarkdownText(text),
          });
        } else {
          // The blocks replace the ones the message showed (its text and Stop button) as well.
          const rendered = renderMrkdwn(text);
          await client.chat.update({
            channel: target.place.channelId,
            ts: messageId,
            text: rendered,
            blocks: textBlocks(rendered),
          });
        }
      } catch (err) {
        throw translateSlackError(err, `slack:${target.place.workspaceId ?? '-'}:update`);
      }
    },
    async postInterrupted(target, text) {
      const client = await clientFor(target);
      try {
        await client.chat.postMessage({
          channel: target.place.channelId,
          text: renderMrkdwn(text),
          ...(target.place.threadId !== undefined ? { thread_ts: target.place.threadId } : {}),
        });
      } catch (err) {
        throw translateSlackError(err, `slack:${target.place.workspaceId ?? '-'}:${target.place.channelId}:post`);
      }
    },
  };
}

/** The app's listeners: messages (intake.ts), assistant threads, buttons, Slack's Stop, the Messages tab, uninstalls. */
function registerListeners(
  app: App,
  deps: IntakeDeps,
  o: { logger: Logger; reads: HistoryReads; installations: Installations | undefined; now: () => number },
): void {
  const { logger } = o;
  const store = o.installations ? createInstallationStore(o.installations, o.now) : undefined;
  registerControlActions(app, deps.handler, logger);
  registerSessionStop(app, deps.handler, logger, deps.sessions);
  registerAgentHome(app, {
    logger,
    greetings: new Greetings(),
    viewing: deps.viewing ?? new Viewing(o.now),
    reads: o.reads,
    live: () => deps.handler() !== undefined,
  });
  app.assistant(
    createAssistant({
      logger,
      intake: (args) => intake(deps, args),
      ...(deps.viewing !== undefined ? { viewing: deps.viewing } : {}),
    }),
  );
  listenForMessages(app, deps);
  const forget = async (context: { teamId?: string; enterpriseId?: string; isEnterpriseInstall?: boolean }) => {
    if (!store) return;
    const query = {
      teamId: context.teamId,
      enterpriseId: context.enterpriseId,
      isEnterpriseInstall: context.isEnterpriseInstall ?? false,
    } as InstallationQuery<boolean>;
    await store.deleteInstallation?.(query);
    logger.info({ teamId: context.teamId }, 'Slack installation removed');
  };
  app.event('app_uninstalled', async ({ context }) => forget(context));
  app.event('tokens_revoked', async ({ event, context }) => {
    if ((event.tokens.bot ?? []).length > 0) await forget(context);
  });
  app.error(async (err) => {
    logger.error({ err: scrubSecrets(String(err)) }, 'Slack listener error');
  });
}
