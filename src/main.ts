import type { Config } from './config/config.js';
import { trustProxyExposure } from './config/trust-proxy.js';
import type { Connector } from './core/ports.js';
import { botRouter, systemClock } from './core/ports.js';
import { type BotRouter, createRelay, type Relay, type RelaySettings } from './core/intake/relay.js';
import type { ChatService } from './core/chat-port.js';
import { RateLimitScheduler, shareOf } from './core/budget/scheduler.js';
import type { AsyncStore } from './store/ports.js';
import { componentLogger, type Logger } from './logger.js';
import { errText, errTextWithCause, type Fatal, StartFailure, startHint, withTimeout } from './lifecycle.js';
import {
  createHttpServer,
  createMetrics,
  healthCheck,
  type HttpServer,
  type PromBridgeMetrics,
  type ReadinessCheck,
  readinessFrom,
} from './server/index.js';
import { type Coordinator, createCoordinator } from './replicas/coordinator.js';
import { createSharedQueue } from './replicas/shared-queue.js';
import { createRemoteStops } from './replicas/remote-stops.js';
import { createChatService } from './upstream/index.js';
import { mountPlayground, type PlaygroundPlan, playgroundUrl } from './connectors/playground/index.js';

/**
 * SIGTERM: replies in flight get DRAIN_MS to finish, then DRAIN_GRACE_MS to write their
 * interruption notes: 10 s in all, inside the 10 s a container runtime waits before SIGKILL.
 */
const DRAIN_MS = 9_000;
const DRAIN_GRACE_MS = 1_000;
/** Repairing the last run's interrupted replies must not hold up start-up for long. */
const RECOVER_TIMEOUT_MS = 15_000;
/** A connector's disconnect at shutdown; one still connecting may never finish it. */
const CONNECTOR_STOP_MS = 3_000;
/** The whole SIGTERM shutdown: the drain, its grace, the connectors' stop and the closes. */
export const STOP_MAX_MS = DRAIN_MS + DRAIN_GRACE_MS + CONNECTOR_STOP_MS + 2_000;

export interface Bridge {
  relay: Relay;
  /** Listens, repairs the last run's replies, starts the connectors; rejects with a StartFailure. */
  start(): Promise<void>;
  /** SIGTERM (also while start() is under way): drain, then close everything. */
  shutdown(): Promise<void>;
  /** A fatal error: close everything now, without waiting for replies. */
  abort(): Promise<void>;
  /** Where a connector's fatal error (after start) goes. */
  onFatal(listener: (f: Fatal) => void): void;
  /** The HTTP port once start() is listening (PORT=0 picks a free one). */
  readonly port: number | undefined;
  /** METRICS_PORT's once start() is listening; undefined when /metrics is served on PORT. */
  readonly metricsPort: number | undefined;
}

/** Builds every part; nothing is started (nor listening) until start(). */
export async function buildBridge(
  config: Config,
  store: AsyncStore,
  root: Logger,
  playground?: PlaygroundPlan,
): Promise<Bridge> {
  const log = componentLogger(root, 'main');
  const state: BridgeState = {
    stopping: false,
    started: false,
    halted: false,
    port: undefined,
    metricsPort: undefined,
    onFatal: undefined,
  };
  const platforms = [...(config.discord ? ['discord' as const] : []), ...(config.slack ? ['slack' as const] : [])];
  const metrics = createMetrics({ platforms });
  const chat = createChatService({
    ...config.upstream,
    logger: componentLogger(root, 'upstream'),
    // Chat Completions keeps its conversations' turns in the store (pruned and reset with them).
    openAi: { ...config.upstream.openAi, transcripts: store.transcripts },
  });
  const connectors: Connector[] = [];
  const scheduler = await restoredScheduler(store, log, metrics, connectors);
  const server = createHttpServer({
    host: config.service.host,
    port: config.service.port,
    logger: componentLogger(root, 'server'),
    metrics,
    readiness: () => readiness(),
    ...(config.service.metrics !== undefined ? { metricsListener: config.service.metrics } : {}),
  });
  const exposure = trustProxyExposure(config.service.host, config.service.trustProxy);
  if (exposure !== undefined) log.warn({ host: config.service.host }, exposure);

  connectors.push(...(await platformConnectors(config, store, root, scheduler, server)));
  const routeBots = botRouter(config.upstream.routes, config.upstream.botId);
  /** Which bot answers in a place: in the playground, the one its page picked (when routes name several). */
  let botFor = routeBots;
  if (playground?.enabled) {
    const p = playgroundConnector(config, store, root, { plan: playground, server, chat, routeBots });
    connectors.push(p);
    botFor = (place) => (place.platform === 'playground' ? p.botOf(place.channelId) : undefined) ?? routeBots(place);
  }
  for (const c of connectors) c.setBudgetShare?.(scheduler.share);
  const readiness = readinessFrom(readinessChecks(store, connectors, state));
  forwardFatals(connectors, state);

  const relay = buildRelay(config, store, root, { chat, botFor, scheduler, metrics });
  const coordinator = heartbeat(config, store, root, { scheduler, connectors, relay });
  const parts: Parts = { config, store, log, server, chat, scheduler, connectors, relay, coordinator, playground };

  return {
    relay,
    get port() {
      return state.port;
    },
    get metricsPort() {
      return state.metricsPort;
    },
    start: () => startBridge(parts, state),
    shutdown: () => shutdownBridge(parts, state),
    onFatal(listener) {
      state.onFatal = listener;
    },
    abort: () => abortBridge(parts, state),
  };
}

/** Where the bridge is in its life: /readyz and start() read it, shutdown() and abort() set it. */
interface BridgeState {
  /** From SIGTERM on: /readyz says so, and a load balancer should send events to the other replicas. */
  stopping: boolean;
  /** Every connector started (slash commands registered): /readyz 200 only from then on. */
  started: boolean;
  /** Set by shutdown()/abort(): start() goes no further, whichever step it is at. */
  halted: boolean;
  /** The HTTP port once start() is listening. */
  port: number | undefined;
  /** METRICS_PORT's once start() is listening. */
  metricsPort: number | undefined;
  /** Set by run(): a connector that can never receive again ends the process. */
  onFatal: ((f: Fatal) => void) | undefined;
}

/** The built parts that start(), shutdown() and abort() work on. */
interface Parts {
  config: Config;
  store: AsyncStore;
  log: Logger;
  server: HttpServer;
  chat: ChatService;
  scheduler: RateLimitScheduler;
  connectors: Connector[];
  relay: Relay;
  coordinator: Coordinator;
  playground: PlaygroundPlan | undefined;
}

/** Marks the bridge halted and stopping; false when it already was (the second SIGTERM). */
function halt(state: BridgeState): boolean {
  const first = !state.halted;
  state.halted = true;
  state.stopping = true;
  return first;
}

/** The platform budgets' scheduler, with what an earlier run (or another replica) learned of the limits. */
async function restoredScheduler(
  store: AsyncStore,
  log: Logger,
  metrics: PromBridgeMetrics,
  connectors: readonly Connector[],
): Promise<RateLimitScheduler> {
  const scheduler = new RateLimitScheduler({
    clock: systemClock,
    // What was learned about the platforms' limits survives a restart and reaches the other replicas.
    store: store.budgets,
    onStoreError: (err) => log.warn({ err }, 'could not keep or read a learned rate limit'),
    // This replica's share of the platform budgets (1 / live replicas, from the heartbeat) shows in
    // /metrics and reaches the connectors (discord.js's own global limit follows it).
    onShareChange: (share) => {
      metrics.budgetShare(share);
      for (const c of connectors) c.setBudgetShare?.(share);
    },
  });
  await scheduler.restore(); // before the first write; a failed read is logged, not fatal
  return scheduler;
}

/**
 * The Discord and Slack connectors that are configured. Each platform's SDK is loaded only when that
 * platform is configured: discord.js and Bolt (with their dependency trees) are most of an idle
 * bridge's memory.
 */
async function platformConnectors(
  config: Config,
  store: AsyncStore,
  root: Logger,
  scheduler: RateLimitScheduler,
  server: HttpServer,
): Promise<Connector[]> {
  const connectors: Connector[] = [];
  if (config.discord) {
    const { createDiscordConnector } = await import('./connectors/discord/index.js');
    const discord = createDiscordConnector({
      config: config.discord,
      logger: componentLogger(root, 'discord'),
      rateLimits: scheduler,
      attachmentMaxBytes: config.service.attachmentMaxBytes,
    });
    connectors.push(discord);
  }
  if (config.slack) {
    const { createSlackConnector } = await import('./connectors/slack/connector.js');
    const slack = createSlackConnector({
      config: config.slack,
      logger: componentLogger(root, 'slack'),
      rateLimits: scheduler,
      scheduler,
      installations: store.installations,
      oauthStates: store.oauthStates,
      http: server,
      attachmentMaxBytes: config.service.attachmentMaxBytes,
    });
    connectors.push(slack);
  }
  return connectors;
}

/** The playground's connector, its routes mounted on the server. */
function playgroundConnector(
  config: Config,
  store: AsyncStore,
  root: Logger,
  deps: { plan: PlaygroundPlan; server: HttpServer; chat: ChatService; routeBots: ReturnType<typeof botRouter> },
): ReturnType<typeof mountPlayground> {
  const { plan } = deps;
  return mountPlayground({
    server: deps.server,
    chat: deps.chat,
    conversations: store.conversations,
    owners: store.playgroundOwners,
    turns: store.playgroundTurns,
    botFor: deps.routeBots,
    bots: [...new Set([config.upstream.botId, ...config.upstream.routes.map((r) => r.botId)])],
    allowRemote: plan.allowRemote,
    trustProxy: plan.trustProxy,
    userMessagesPerMinute: config.service.userMessagesPerMinute,
    token: plan.token,
    publicHosts: plan.publicHosts,
    bindHost: config.service.host,
    limits: plan.limits,
    emulator: plan.emulator,
    feedback: store.feedback,
    logger: componentLogger(root, 'playground'),
  });
}

/** /readyz's checks: the store, each connector, and whether the bridge is accepting (started, not stopping). */
function readinessChecks(
  store: AsyncStore,
  connectors: readonly Connector[],
  state: Readonly<BridgeState>,
): Record<string, ReadinessCheck> {
  // Open and writable: the store checks itself (every 5 s) and fails on its first write error.
  const checks: Record<string, ReadinessCheck> = { database: healthCheck(store) };
  for (const c of connectors) checks[c.platform] = () => (c.readiness ? c.readiness() : c.isReady());
  // From SIGTERM on, a load balancer should send events to the other replicas.
  checks.accepting = () => {
    if (state.stopping) return 'shutting down: finishing the replies in flight';
    return state.started || 'starting: the connectors are not all started yet';
  };
  return checks;
}

/** A connector's fatal error (after start) goes to run()'s listener, with the hint for its platform. */
function forwardFatals(connectors: readonly Connector[], state: Readonly<BridgeState>): void {
  for (const c of connectors) {
    c.onFatal?.((err) => {
      const reason = errText(err);
      state.onFatal?.({
        what: `the ${c.platform} connector stopped for good`,
        reason,
        check: startHint(c.platform, reason),
      });
    });
  }
}

/** The relay: the core, wired to the chat service, the store, the other replicas and the budgets. */
function buildRelay(
  config: Config,
  store: AsyncStore,
  root: Logger,
  deps: { chat: ChatService; botFor: BotRouter; scheduler: RateLimitScheduler; metrics: PromBridgeMetrics },
): Relay {
  return createRelay({
    chat: deps.chat,
    botFor: deps.botFor,
    ...storePorts(store),
    ...replicaPorts(config, store, root),
    scheduler: deps.scheduler,
    metrics: deps.metrics,
    logger: componentLogger(root, 'relay'),
    clock: systemClock,
    drainGraceMs: DRAIN_GRACE_MS,
    settings: relaySettings(config),
  });
}

/** The relay's ports to the store. */
function storePorts(store: AsyncStore) {
  return {
    conversations: store.conversations,
    events: store.events,
    inflight: store.inflight,
    feedback: store.feedback,
    housekeeping: (now: number) => store.housekeeping(now),
    // Messages an outage of the store held are answered once its own check finds it back.
    storeHealth: {
      health: () => store.health(),
      onHealthChange: (l: Parameters<AsyncStore['onHealthChange']>[0]) => store.onHealthChange(l),
    },
  };
}

/** What the relay needs to share the places with other replicas: their leases per place, and their Stops. */
function replicaPorts(config: Config, store: AsyncStore, root: Logger) {
  return {
    replicaId: config.replica.id,
    // One process on SQLite answers every place alone; replicas on PostgreSQL share each place through its lease.
    ...(store.backend === 'postgres'
      ? {
          sharedQueue: createSharedQueue({
            leases: store.leases,
            replicaId: config.replica.id,
            leaseMs: config.replica.leaseSeconds * 1000,
            clock: systemClock,
            logger: componentLogger(root, 'replicas'),
          }),
        }
      : {}),
    // A Stop pressed, or `stop` written, at another replica than the one writing the reply.
    ...(store.signals !== undefined
      ? {
          remoteStops: createRemoteStops({
            leases: store.leases,
            signals: store.signals,
            replicaId: config.replica.id,
            logger: componentLogger(root, 'replicas'),
          }),
        }
      : {}),
  };
}

/** The relay's settings: plain numbers and allowlists, read from config. */
function relaySettings(config: Config): RelaySettings {
  return {
    streaming: config.upstream.streaming,
    sessionIdleSeconds: config.upstream.sessionIdleSeconds,
    ...(config.upstream.maxMessageChars !== undefined ? { maxMessageChars: config.upstream.maxMessageChars } : {}),
    context: config.upstream.context,
    feedback: config.service.feedback,
    showSteps: config.service.showSteps,
    showSources: config.service.showSources,
    conversationRetentionDays: config.service.conversationRetentionDays,
    userMessagesPerMinute: config.service.userMessagesPerMinute,
    maxConcurrentReplies: config.service.maxConcurrentReplies,
    maxQueuedReplies: config.service.maxQueuedReplies,
    replyMaxSeconds: config.upstream.maxReplySeconds,
    replyMaxChars: config.upstream.maxReplyChars,
    streamEditIntervalMs: config.service.streamEditIntervalMs,
    allow: {
      slack: { workspaces: config.slack?.allowedTeams ?? [], channels: config.slack?.allowedChannels ?? [] },
      discord: { workspaces: config.discord?.allowedGuilds ?? [], channels: config.discord?.allowedChannels ?? [] },
    },
  };
}

/**
 * This replica's heartbeat; the replies of replicas that stopped (or of this one's last run) are
 * repaired: edited to say they were interrupted, before the connectors deliver messages.
 */
function heartbeat(
  config: Config,
  store: AsyncStore,
  root: Logger,
  deps: { scheduler: RateLimitScheduler; connectors: Connector[]; relay: Relay },
): Coordinator {
  const { scheduler, connectors, relay } = deps;
  return createCoordinator({
    store,
    replicaId: config.replica.id,
    leaseMs: config.replica.leaseSeconds * 1000,
    clock: systemClock,
    logger: componentLogger(root, 'replicas'),
    // The platform budgets are shared between the live replicas, and what one learns reaches the rest.
    onMembership: (live) => scheduler.setShare(shareOf(live)),
    onBeat: () => scheduler.sync(),
    platforms: connectors.map((c) => c.platform),
    repair: async (records) => {
      await relay.recoverInterrupted(connectors, records);
    },
  });
}

/** Listens, repairs the last run's replies, starts the connectors; stops early once halted. */
async function startBridge(parts: Parts, state: BridgeState): Promise<void> {
  const { log, relay, connectors, coordinator } = parts;
  await listen(parts, state);
  if (state.halted) return;
  try {
    const orphans = await withTimeout(coordinator.start(), RECOVER_TIMEOUT_MS);
    // The relay logs what it repaired, could not repair and failed to repair.
    if (!state.halted) await withTimeout(relay.recoverInterrupted(connectors, orphans), RECOVER_TIMEOUT_MS);
  } catch (err) {
    log.warn({ err: errText(err) }, 'could not mark earlier replies as interrupted');
  }
  for (const c of connectors) {
    if (state.halted) return;
    try {
      await c.start(relay);
    } catch (err) {
      if (state.halted) return; // stopped while connecting: not a failure
      const reason = errTextWithCause(err);
      throw new StartFailure({
        what: `the ${c.platform} connector cannot start`,
        reason,
        check: startHint(c.platform, reason),
      });
    }
    log.info({ platform: c.platform }, 'connector started');
  }
  // Ready (/readyz 200) only now: slash commands registered, every connector started.
  if (!state.halted) state.started = true;
}

/** The HTTP server (and the metrics one) listening, and where, in the log. */
async function listen(parts: Parts, state: BridgeState): Promise<void> {
  const { config, log, server, playground } = parts;
  let port: number;
  try {
    let metricsPort: number | undefined;
    ({ port, metricsPort } = await server.listen());
    state.port = port;
    state.metricsPort = metricsPort;
  } catch (err) {
    throw new StartFailure({
      what: 'the HTTP server cannot start',
      reason: errText(err),
      check: 'check HOST and PORT, and METRICS_HOST and METRICS_PORT (is another process on that port?)',
    });
  }
  if (state.metricsPort === undefined)
    log.info({ host: config.service.host, port }, 'HTTP server listening (/healthz, /readyz, /metrics)');
  else {
    log.info({ host: config.service.host, port }, 'HTTP server listening (/healthz, /readyz)');
    log.info({ host: config.service.metrics?.host, port: state.metricsPort }, 'metrics server listening (/metrics)');
  }
  if (playground?.enabled) {
    const url = playgroundUrl(config.service.host, port);
    if (playground.allowRemote)
      log.warn(
        { url: `${url}playground?token=…` },
        `playground: open to other machines, for whoever has PLAYGROUND_TOKEN (it spends the API key): open ${url}playground?token=<PLAYGROUND_TOKEN> once in each browser`,
      );
    else log.info({ url, loopbackOnly: true }, `playground: open ${url} in a browser`);
  }
}

/** SIGTERM: drain, then close everything. */
async function shutdownBridge(parts: Parts, state: BridgeState): Promise<void> {
  if (!halt(state)) return;
  // Stop taking new messages, let replies finish (up to DRAIN_MS), mark the rest interrupted;
  // only then disconnect, since the last edits need the platform connections. Slack's Socket
  // Mode connection is not needed for them: it closes first, so that Slack sends the events
  // of the drain to the other replicas' connections instead of this one refusing them.
  await Promise.allSettled(parts.connectors.map((c) => c.closeIntake?.()));
  await parts.relay.drain(DRAIN_MS);
  await closeAll(parts);
}

/** A fatal error: close everything now, without waiting for replies. */
async function abortBridge(parts: Parts, state: BridgeState): Promise<void> {
  if (!halt(state)) return;
  await closeAll(parts);
}

/** Stops every timer and loop and closes what is open: connectors, heartbeat, server, store. */
async function closeAll(parts: Parts): Promise<void> {
  const { connectors, coordinator, server, chat, scheduler, store } = parts;
  // A connector still connecting (discord.js waiting for a shard's READY) may never finish
  // its stop: it is bounded, and the process ends anyway.
  await Promise.allSettled(connectors.map((c) => withTimeout(c.shutdown(), CONNECTOR_STOP_MS)));
  await coordinator.stop(); // leaves the group: the others rebalance at once
  await server.close();
  await chat.close();
  scheduler.close(); // saves the newest lessons before the database closes
  await scheduler.flush();
  await store.close();
}
