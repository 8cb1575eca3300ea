import { type Config, ConfigError, loadConfig, readEnv } from './config/config.js';
import { botRouter } from './config/routes.js';
import type { Connector } from './core/ports.js';
import { systemClock } from './core/ports.js';
import { createRelay, type Relay } from './core/relay.js';
import { RateLimitScheduler } from './core/scheduler.js';
import { createBudgetRepo } from './store/budget-repo.js';
import { componentLogger, createLogger, type Logger, scrubSecrets } from './logger.js';
import { createHttpServer, createMetrics, healthProbe, type ReadinessProbe, readinessFrom } from './server/index.js';
import { MigrationError, openStore, type Store } from './store/index.js';
import { createChatService } from './upstream/index.js';

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
  try {
    config = loadConfig(readEnv());
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (config.postgres) {
    // The PostgreSQL store exists (migrate, doctor) but the core does not run on it yet: running on
    // SQLite instead would let replicas that meant to share a database answer events twice.
    process.stderr.write(
      'Configuration error:\n  - DATABASE_URL: `start` does not run on PostgreSQL yet (`migrate` and `doctor` do); unset it to run on SQLite at DATABASE_PATH\n',
    );
    return 2;
  }
  const root = createLogger({ level: config.service.logLevel });
  const log = componentLogger(root, 'main');
  installCrashHandlers(log);

  let store: Store;
  try {
    store = openStore(config.service.databasePath, { logger: componentLogger(root, 'store') });
  } catch (err) {
    log.fatal({ err: err instanceof Error ? err.message : String(err) }, 'cannot open the database');
    process.stderr.write(
      err instanceof MigrationError
        ? `${err.message}\n`
        : `cannot open ${config.service.databasePath}: ${String(err)}\n`,
    );
    return 1;
  }

  const bridge = await startBridge(config, store, root);
  if (!bridge) {
    store.close();
    return 1;
  }
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  log.info({ signal }, 'shutting down: draining replies in flight');
  await bridge.stop();
  log.info('stopped');
  return 0;
}

export interface RunningBridge {
  relay: Relay;
  port: number;
  stop(): Promise<void>;
}

/** Builds and starts every part; undefined (after logging why) when a part cannot start. */
export async function startBridge(config: Config, store: Store, root: Logger): Promise<RunningBridge | undefined> {
  const log = componentLogger(root, 'main');
  const platforms = [...(config.discord ? ['discord' as const] : []), ...(config.slack ? ['slack' as const] : [])];
  const metrics = createMetrics({ platforms });
  const chat = createChatService({ ...config.upstream, logger: componentLogger(root, 'upstream') });
  const scheduler = new RateLimitScheduler({
    clock: systemClock,
    // What was learned about the platforms' limits survives a restart.
    store: createBudgetRepo(store.db),
    onStoreError: (err) => log.warn({ err }, 'could not keep a learned rate limit'),
  });
  const server = createHttpServer({
    host: config.service.host,
    port: config.service.port,
    logger: componentLogger(root, 'server'),
    metrics,
    readiness: () => readiness(),
  });

  const connectors: Connector[] = [];
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
  }
  if (config.slack) {
    const { createSlackConnector } = await import('./connectors/slack/connector.js');
    const slack = createSlackConnector({
      config: config.slack,
      logger: componentLogger(root, 'slack'),
      rateLimits: scheduler,
      installations: store.installations,
      http: server,
      attachmentMaxBytes: config.service.attachmentMaxBytes,
    });
    connectors.push(slack);
    probes.slack = () => slack.isReady();
  }
  const readiness = readinessFrom(probes);

  const relay = createRelay({
    chat,
    botFor: botRouter(config.upstream.routes, config.upstream.botId),
    conversations: store.conversations,
    events: store.events,
    inflight: store.inflight,
    feedback: store.feedback,
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

  // Replies a crash left half-written are edited to say they were interrupted. Before the
  // connectors deliver messages: every reply still 'streaming' now belongs to the last run.
  try {
    // The relay logs what it repaired, could not repair and failed to repair.
    await withTimeout(relay.recoverInterrupted(connectors), RECOVER_TIMEOUT_MS);
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
      // only then disconnect, since the last edits need the platform connections.
      await relay.drain(DRAIN_MS);
      await Promise.allSettled(connectors.map((c) => c.stop()));
      await server.close();
      await chat.close();
      scheduler.close(); // saves the newest lessons before the database closes
      store.close();
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
