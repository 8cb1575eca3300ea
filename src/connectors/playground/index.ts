import type { Config } from '../../config/config.js';
import type { ChatService } from '../../core/chat-port.js';
import type { ConversationStore } from '../../core/ports.js';
import type { Logger } from '../../logger.js';
import type { HttpServer } from '../../server/http-server.js';
import { createPlaygroundConnector, type PlaygroundConnector } from './connector.js';
import { createPlaygroundRoutes } from './http.js';
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
 * function. The emulator's own key and bot are used: nothing else could answer them.
 */
export async function useBuiltInEmulator(config: Config, log: Logger): Promise<() => Promise<void>> {
  const { startEmulator, EMULATOR_DEFAULTS } = await import('../../emulator/index.js');
  // Every form it speaks, so CHAT_API_FORM (a, b, chat-completions, responses) works unchanged with it.
  const emulator = await startEmulator({ host: '127.0.0.1', port: 0, form: 'all' });
  const botId = EMULATOR_DEFAULTS.bots[0] ?? 'demo-bot';
  config.upstream = { ...config.upstream, url: emulator.url, apiKey: EMULATOR_DEFAULTS.apiKey, botId, routes: [] };
  log.info(
    { upstream: emulator.url },
    'no CHAT_API_URL: the built-in emulator answers in this process (replies echo; try "[long 6000]" or "[delay 200]")',
  );
  return () => emulator.close();
}

export interface PlaygroundWiring {
  server: HttpServer;
  chat: ChatService;
  conversations: ConversationStore;
  botFor: (place: { platform: string; workspaceId?: string; channelId: string }) => string;
  allowRemote: boolean;
  /** PLAYGROUND_TOKEN (required with allowRemote: configForStart refuses without). */
  token?: string | undefined;
  /** PLAYGROUND_PUBLIC_HOST. */
  publicHosts?: string[] | undefined;
  /** HOST the server binds. */
  bindHost?: string | undefined;
  /** Bounds other than the defaults (tests). */
  limits?: PlaygroundLimits | undefined;
  logger: Logger;
}

/** The connector, its page at `/` and its routes under `/playground`. */
export function mountPlayground(w: PlaygroundWiring): PlaygroundConnector {
  const l = w.limits ?? {};
  const connector = createPlaygroundConnector({
    logger: w.logger,
    ...(l.conversations !== undefined ? { maxConversations: l.conversations } : {}),
  });
  const streamLimits: Partial<StreamLimits> = {};
  if (l.streamsPerBrowser !== undefined) streamLimits.perUser = l.streamsPerBrowser;
  if (l.streams !== undefined) streamLimits.total = l.streams;
  if (l.streamIdleMs !== undefined) streamLimits.idleMs = l.streamIdleMs;
  if (l.keepaliveMs !== undefined) streamLimits.keepaliveMs = l.keepaliveMs;
  const routes = createPlaygroundRoutes({ ...w, connector, streamLimits });
  w.server.mount('/', routes.page);
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
