import { randomBytes } from 'node:crypto';
import type { Config } from '../../config/config.js';
import type { PlaygroundTurnStore } from '../../core/ports.js';
import type { Logger } from '../../logger.js';
import type { HttpServer } from '../../server/http-server.js';
import { createPlaygroundConnector, type PlaygroundConnector } from './connector.js';
import { ADDRESS_BROWSERS, createPlaygroundRoutes } from './http.js';
import type { PlaygroundHttpOptions } from './routes-context.js';
import type { StreamLimits } from './streams.js';
import type { PlaygroundLimits } from '../../config/start-config.js';

export { createPlaygroundConnector, type PlaygroundConnector, type ReplyView } from './connector.js';
export { createPlaygroundRoutes, isLoopback } from './http.js';

export {
  configForStart,
  type PlaygroundLimits,
  type PlaygroundPlan,
  playgroundPlan,
} from '../../config/start-config.js';

/**
 * Starts the emulator as the upstream and points the configuration at it. Returns its close
 * function. It is as closed as the playground: a key made for this process (not the emulator's
 * default `dev-key`, which any local user or rebinding page could send), loopback names only,
 * and no `/_emulator/*` admin paths (whose request log holds every playground message).
 */
export async function useBuiltInEmulator(config: Config, log: Logger): Promise<() => Promise<void>> {
  const { startEmulator, EMULATOR_DEFAULTS } = await import('../../emulator/index.js');
  const apiKey = randomBytes(24).toString('base64url');
  // Every form it speaks, so CHAT_API_FORM (a, b, chat-completions, responses) works unchanged with it.
  const emulator = await startEmulator({ host: '127.0.0.1', port: 0, apiKey, admin: false, form: 'all' });
  const botId = EMULATOR_DEFAULTS.bots[0] ?? 'demo-bot';
  config.upstream = { ...config.upstream, url: emulator.url, apiKey, botId, routes: [] };
  log.info(
    { upstream: emulator.url },
    'no CHAT_API_URL: the built-in emulator answers in this process (replies echo; try "[long 6000]" or "[delay 200]")',
  );
  return () => emulator.close();
}

/** The routes' own options that mountPlayground takes as they are (the rest it makes itself). */
type RouteWiring = Pick<
  PlaygroundHttpOptions,
  | 'chat'
  | 'conversations'
  | 'owners'
  | 'botFor'
  | 'allowRemote'
  | 'token'
  | 'publicHosts'
  | 'bindHost'
  | 'feedback'
  | 'trustProxy'
  | 'logger'
>;

export interface PlaygroundWiring extends RouteWiring {
  server: HttpServer;
  /** Bounds other than the defaults (tests). */
  limits?: PlaygroundLimits | undefined;
  /** The built-in emulator is the upstream (the page then offers its commands). */
  emulator?: boolean | undefined;
  /** The bots a page may pick from (the default bot and those BOT_ROUTES names): a picker when several. */
  bots?: string[] | undefined;
  /** Where what the page showed of each turn is kept, so a reload after a restart shows it (issue 41). */
  turns?: PlaygroundTurnStore | undefined;
  /** USER_MESSAGES_PER_MINUTE: an address may send ADDRESS_BROWSERS times as many. */
  userMessagesPerMinute?: number | undefined;
}

/** The connector, its page at `/` and its routes under `/playground`. */
export function mountPlayground(w: PlaygroundWiring): PlaygroundConnector {
  const l = w.limits ?? {};
  const connector = createPlaygroundConnector({
    logger: w.logger,
    ...(w.bots !== undefined ? { bots: w.bots } : {}),
    ...(l.conversations !== undefined ? { maxConversations: l.conversations } : {}),
    turns: w.turns,
  });
  const streamLimits: Partial<StreamLimits> = {};
  if (l.streamsPerBrowser !== undefined) streamLimits.perUser = l.streamsPerBrowser;
  if (l.streams !== undefined) streamLimits.total = l.streams;
  if (l.streamsPerAddress !== undefined) streamLimits.perAddress = l.streamsPerAddress;
  if (l.streamIdleMs !== undefined) streamLimits.idleMs = l.streamIdleMs;
  if (l.keepaliveMs !== undefined) streamLimits.keepaliveMs = l.keepaliveMs;
  const routes = createPlaygroundRoutes({
    ...w,
    connector,
    streamLimits,
    facts: { emulator: w.emulator === true, bots: w.bots ?? [] },
    ...(w.userMessagesPerMinute !== undefined
      ? { messagesPerAddressPerMinute: ADDRESS_BROWSERS * w.userMessagesPerMinute }
      : {}),
  });
  w.server.mount('/', routes.page);
  w.server.mount('/favicon.ico', routes.favicon);
  w.server.mount('/playground', routes.api);
  const shutdown = connector.shutdown.bind(connector);
  connector.shutdown = async () => {
    await shutdown();
    routes.close();
  };
  return connector;
}

/** The address to print: a wildcard host is reached at the loopback address. */
export function playgroundUrl(host: string, port: number): string {
  const h = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}/`;
}
