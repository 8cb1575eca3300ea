import { buildConfig, type Config, ConfigError, parseRawEnv, readEnv } from './config/config.js';
import { botRouter } from './config/routes.js';
import type { Connector } from './core/ports.js';
import { systemClock } from './core/ports.js';
import { createRelay, type Relay } from './core/relay.js';
import { RateLimitScheduler, shareOf } from './core/scheduler.js';
import { openBridgeStore } from './bridge-store.js';
import type { AsyncStore } from './store/async-port.js';
import { componentLogger, createLogger, type Logger, scrubSecrets } from './logger.js';
import { createHttpServer, createMetrics, healthProbe, type ReadinessProbe, readinessFrom } from './server/index.js';
import { createCoordinator } from './replicas/coordinator.js';
import { createPlaceLocks } from './replicas/place-locks.js';
import { createRemoteStops } from './replicas/remote-stops.js';
import { createChatService } from './upstream/index.js';
import {
  mountPlayground,
  type PlaygroundPlan,
  playgroundPlan,
  playgroundUrl,
  useBuiltInEmulator,
} from './connectors/playground/index.js';

/**
 * SIGTERM: replies in flight get DRAIN_MS to finish, then DRAIN_GRACE_MS to write their
 * interruption notes: 10 s in all, inside the 10 s a container runtime waits before SIGKILL.
 */
const DRAIN_MS = 9_000;
const DRAIN_GRACE_MS = 1_000;
/** Repairing the last run's interrupted replies must not hold up start-up for long. */
const RECOVER_TIMEOUT_MS = 15_000;

/**
 * `assistant-bridge start` / `npm start`: the composition root. Reads the configuration, builds
 * the parts, runs until SIGTERM/SIGINT, then drains. Configuration mistakes exit 2 with a message
 * naming the variables, never a stack trace.
 */
export async function run(_args: string[]): Promise<number> {
  let config: Config;
  let playground: PlaygroundPlan;
  try {
    const raw = parseRawEnv(readEnv());
    playground = playgroundPlan(raw);
    config = buildConfig(raw, { requirePlatform: !playground.enabled, requireUpstream: !playground.emulator });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const root = createLogger({ level: config.service.logLevel });
  const log = componentLogger(root, 'main');
  installCrashHandlers(log);

  // The playground's upstream when no CHAT_API_URL is set: the emulator, in this process.
  const closeEmulator = playground.emulator ? await useBuiltInEmulator(config, log) : async () => {};
  const store = await openBridgeStore(config, root);
  if (store === undefined) return 1;

  const bridge = await startBridge(config, store, root, playground);
  if (!bridge) {
    await store.close();
    await closeEmulator();
    return 1;
  }
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  log.info({ signal }, 'shutting down: draining replies in flight');
  await bridge.stop();
  await closeEmulator();
  log.info('stopped');
  return 0;
}

export interface RunningBridge {
  relay: Relay;
  port: number;
  stop(): Promise<void>;
}

/** Builds and starts every part; undefined (after logging why) when a part cannot start. */
export async function startBridge(
  config: Config,
  store: AsyncStore,
  root: Logger,
  playground?: PlaygroundPlan,
): Promise<RunningBridge | undefined> {
  const log = componentLogger(root, 'main');
  const platforms = [...(config.discord ? ['discord' as const] : []), ...(config.slack ? ['slack' as const] : [])];
  const metrics = createMetrics({ platforms });
  const chat = createChatService({ ...config.upstream, logger: componentLogger(root, 'upstream') });
  // This replica's share of the platform budgets (1 / live replicas, from the heartbeat) shows in
  // /metrics and in discord.js's own global limit.
  let discordShare: ((share: number) => void) | undefined;
  const scheduler = new RateLimitScheduler({
    clock: systemClock,
    // What was learned about the platforms' limits survives a restart and reaches the other replicas.
    store: store.budgets,
    onStoreError: (err) => log.warn({ err }, 'could not keep or read a learned rate limit'),
    onShareChange: (share) => {
      metrics.budgetShare(share);
      discordShare?.(share);
    },
  });
  await scheduler.restore(); // before the first write; a failed read is logged, not fatal
  const server = createHttpServer({
    host: config.service.host,
    port: config.service.port,
    logger: componentLogger(root, 'server'),
    metrics,
    readiness: () => readiness(),
  });

  const connectors: Connector[] = [];
  /** First steps of a shutdown: connectors that can stop receiving while their replies finish. */
  const stopReceiving: Array<() => Promise<void>> = [];
  // Open and writable: the store probes itself (every 5 s) and fails on its first write error.
  const probes: Record<string, ReadinessProbe> = { database: healthProbe(store) };
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
    probes.discord = () => discord.readiness();
    discordShare = (share) => discord.setBudgetShare(share);
    discordShare(scheduler.share);
  }
  if (config.slack) {
    const { createSlackConnector } = await import('./connectors/slack/connector.js');
    const slack = createSlackConnector({
      config: config.slack,
      logger: componentLogger(root, 'slack'),
      rateLimits: scheduler,
      installations: store.installations,
      oauthStates: store.oauthStates,
      http: server,
      attachmentMaxBytes: config.service.attachmentMaxBytes,
    });
    connectors.push(slack);
    probes.slack = () => slack.isReady();
    stopReceiving.push(() => slack.stopReceiving());
  }
  if (playground?.enabled) {
    const p = mountPlayground({
      server,
      chat,
      conversations: store.conversations,
      botFor: botRouter(config.upstream.routes, config.upstream.botId),
      allowRemote: playground.allowRemote,
      logger: componentLogger(root, 'playground'),
    });
    connectors.push(p);
  }
  // From SIGTERM on, a load balancer should send events to the other replicas.
  let stopping = false;
  probes.accepting = () => !stopping || 'shutting down: finishing the replies in flight';
  const readiness = readinessFrom(probes);

  const relay = createRelay({
    chat,
    botFor: botRouter(config.upstream.routes, config.upstream.botId),
    conversations: store.conversations,
    events: store.events,
    inflight: store.inflight,
    feedback: store.feedback,
    replicaId: config.replica.id,
    // One process on SQLite answers every place alone; replicas on PostgreSQL take turns per place.
    ...(store.backend === 'postgres'
      ? {
          placeLocks: createPlaceLocks({
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

  let port: number;
  try {
    ({ port } = await server.listen());
  } catch (err) {
    log.fatal({ err: errText(err) }, 'cannot start the HTTP server');
    await chat.close();
    return undefined;
  }
  log.info({ host: config.service.host, port }, 'HTTP server listening (/healthz, /readyz, /metrics)');
  if (playground?.enabled) {
    const url = playgroundUrl(config.service.host, port);
    log.info({ url, loopbackOnly: !playground.allowRemote }, `playground: open ${url} in a browser`);
  }

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
  try {
    const orphans = await withTimeout(coordinator.start(), RECOVER_TIMEOUT_MS);
    // The relay logs what it repaired, could not repair and failed to repair.
    await withTimeout(relay.recoverInterrupted(connectors, orphans), RECOVER_TIMEOUT_MS);
  } catch (err) {
    log.warn({ err: errText(err) }, 'could not mark earlier replies as interrupted');
  }

  const started: Connector[] = [];
  for (const c of connectors) {
    try {
      await c.start(relay);
      started.push(c);
      log.info({ platform: c.platform }, 'connector started');
    } catch (err) {
      log.fatal({ platform: c.platform, err: errText(err) }, 'connector failed to start');
      await Promise.allSettled(started.map((s) => s.stop()));
      await server.close();
      await chat.close();
      return undefined;
    }
  }

  return {
    relay,
    port,
    async stop() {
      // Stop taking new messages, let replies finish (up to DRAIN_MS), mark the rest interrupted;
      // only then disconnect, since the last edits need the platform connections. Slack's Socket
      // Mode connection is not needed for them: it closes first, so that Slack sends the events
      // of the drain to the other replicas' connections instead of this one refusing them.
      stopping = true;
      await Promise.allSettled(stopReceiving.map((s) => s()));
      await relay.drain(DRAIN_MS);
      await Promise.allSettled(connectors.map((c) => c.stop()));
      await coordinator.stop(); // leaves the group: the others rebalance at once
      await server.close();
      await chat.close();
      scheduler.close(); // saves the newest lessons before the database closes
      await scheduler.flush();
      await store.close();
    },
  };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

function errText(err: unknown): string {
  return scrubSecrets(err instanceof Error ? err.message : String(err));
}

let crashHandlersInstalled = false;

/** An uncaught error exits non-zero so the container restarts; a stray rejection is logged. */
function installCrashHandlers(log: Logger): void {
  if (crashHandlersInstalled) return;
  crashHandlersInstalled = true;
  process.on('uncaughtException', (err) => {
    log.fatal({ err: errText(err), stack: err.stack }, 'uncaught exception; exiting');
    process.exitCode = 1;
    setImmediate(() => process.exit(1));
  });
  process.on('unhandledRejection', (reason) => {
    log.error({ err: errText(reason) }, 'unhandled promise rejection');
  });
}
