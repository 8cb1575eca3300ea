import type { Config } from './config/config.js';
import { trustProxyExposure } from './config/trust-proxy.js';
import type { Connector } from './core/ports.js';
import { botRouter, systemClock } from './core/ports.js';
import { createRelay, type Relay } from './core/intake/relay.js';
import { RateLimitScheduler, shareOf } from './core/budget/scheduler.js';
import type { AsyncStore } from './store/ports.js';
import { componentLogger, type Logger } from './logger.js';
import { errText, errTextWithCause, type Fatal, StartFailure, startHint, withTimeout } from './lifecycle.js';
import { createHttpServer, createMetrics, healthCheck, type ReadinessCheck, readinessFrom } from './server/index.js';
import { createCoordinator } from './replicas/coordinator.js';
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
  const platforms = [...(config.discord ? ['discord' as const] : []), ...(config.slack ? ['slack' as const] : [])];
  const metrics = createMetrics({ platforms });
  const chat = createChatService({
    ...config.upstream,
    logger: componentLogger(root, 'upstream'),
    // Chat Completions keeps its conversations' turns in the store (pruned and reset with them).
    openAi: { ...config.upstream.openAi, transcripts: store.transcripts },
  });
  const connectors: Connector[] = [];
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

  // Open and writable: the store checks itself (every 5 s) and fails on its first write error.
  const checks: Record<string, ReadinessCheck> = { database: healthCheck(store) };
  // Each platform's SDK is loaded only when that platform is configured: discord.js and Bolt
  // (with their dependency trees) are most of an idle bridge's memory.
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
  const routeBots = botRouter(config.upstream.routes, config.upstream.botId);
  /** Which bot answers in a place: in the playground, the one its page picked (when routes name several). */
  let botFor = routeBots;
  if (playground?.enabled) {
    const p = mountPlayground({
      server,
      chat,
      conversations: store.conversations,
      owners: store.playgroundOwners,
      botFor: routeBots,
      bots: [...new Set([config.upstream.botId, ...config.upstream.routes.map((r) => r.botId)])],
      allowRemote: playground.allowRemote,
      trustProxy: playground.trustProxy,
      userMessagesPerMinute: config.service.userMessagesPerMinute,
      token: playground.token,
      publicHosts: playground.publicHosts,
      bindHost: config.service.host,
      limits: playground.limits,
      emulator: playground.emulator,
      feedback: store.feedback,
      logger: componentLogger(root, 'playground'),
    });
    connectors.push(p);
    botFor = (place) => (place.platform === 'playground' ? p.botOf(place.channelId) : undefined) ?? routeBots(place);
  }
  for (const c of connectors) {
    c.setBudgetShare?.(scheduler.share);
    checks[c.platform] = () => (c.readiness ? c.readiness() : c.isReady());
  }
  // From SIGTERM on, a load balancer should send events to the other replicas.
  let stopping = false;
  let started = false;
  checks.accepting = () => {
    if (stopping) return 'shutting down: finishing the replies in flight';
    return started || 'starting: the connectors are not all started yet';
  };
  const readiness = readinessFrom(checks);
  /** Set by run(): a connector that can never receive again ends the process. */
  let onFatal: ((f: Fatal) => void) | undefined;
  for (const c of connectors) {
    c.onFatal?.((err) => {
      const reason = errText(err);
      onFatal?.({ what: `the ${c.platform} connector stopped for good`, reason, check: startHint(c.platform, reason) });
    });
  }

  const relay = createRelay({
    chat,
    botFor,
    conversations: store.conversations,
    events: store.events,
    inflight: store.inflight,
    feedback: store.feedback,
    housekeeping: (now) => store.housekeeping(now),
    // Messages an outage of the store held are answered once its own check finds it back.
    storeHealth: { health: () => store.health(), onHealthChange: (l) => store.onHealthChange(l) },
    replicaId: config.replica.id,
    // One process on SQLite answers every place alone; replicas on PostgreSQL take turns per place.
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
    scheduler,
    metrics,
    logger: componentLogger(root, 'relay'),
    clock: systemClock,
    drainGraceMs: DRAIN_GRACE_MS,
    settings: {
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
    },
  });

  // This replica's heartbeat; the replies of replicas that stopped (or of this one's last run) are
  // repaired: edited to say they were interrupted, before the connectors deliver messages.
  const coordinator = createCoordinator({
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

  /** Set by stop()/abort(): start() goes no further, whichever step it is at. */
  let halted = false;
  const halt = (): boolean => {
    const first = !halted;
    halted = true;
    stopping = true;
    return first;
  };
  /** Stops every timer and loop and closes what is open: connectors, heartbeat, server, store. */
  async function closeAll(): Promise<void> {
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

  let listening: number | undefined;
  let metricsListening: number | undefined;
  return {
    relay,
    get port() {
      return listening;
    },
    get metricsPort() {
      return metricsListening;
    },
    async start() {
      let port: number;
      try {
        let metricsPort: number | undefined;
        ({ port, metricsPort } = await server.listen());
        listening = port;
        metricsListening = metricsPort;
      } catch (err) {
        throw new StartFailure({
          what: 'the HTTP server cannot start',
          reason: errText(err),
          check: 'check HOST and PORT, and METRICS_HOST and METRICS_PORT (is another process on that port?)',
        });
      }
      if (metricsListening === undefined)
        log.info({ host: config.service.host, port }, 'HTTP server listening (/healthz, /readyz, /metrics)');
      else {
        log.info({ host: config.service.host, port }, 'HTTP server listening (/healthz, /readyz)');
        log.info({ host: config.service.metrics?.host, port: metricsListening }, 'metrics server listening (/metrics)');
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
      if (halted) return;
      try {
        const orphans = await withTimeout(coordinator.start(), RECOVER_TIMEOUT_MS);
        // The relay logs what it repaired, could not repair and failed to repair.
        if (!halted) await withTimeout(relay.recoverInterrupted(connectors, orphans), RECOVER_TIMEOUT_MS);
      } catch (err) {
        log.warn({ err: errText(err) }, 'could not mark earlier replies as interrupted');
      }
      for (const c of connectors) {
        if (halted) return;
        try {
          await c.start(relay);
        } catch (err) {
          if (halted) return; // stopped while connecting: not a failure
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
      if (!halted) started = true;
    },
    async shutdown() {
      if (!halt()) return;
      // Stop taking new messages, let replies finish (up to DRAIN_MS), mark the rest interrupted;
      // only then disconnect, since the last edits need the platform connections. Slack's Socket
      // Mode connection is not needed for them: it closes first, so that Slack sends the events
      // of the drain to the other replicas' connections instead of this one refusing them.
      await Promise.allSettled(connectors.map((c) => c.closeIntake?.()));
      await relay.drain(DRAIN_MS);
      await closeAll();
    },
    onFatal(listener) {
      onFatal = listener;
    },
    async abort() {
      if (!halt()) return;
      await closeAll();
    },
  };
}
