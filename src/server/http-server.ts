import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../logger.js';
import { scrubSecrets } from '../scrub.js';
import { notReady, type Readiness } from './readiness.js';

// The one HTTP server of the process: /healthz, /readyz, /metrics, and whatever a connector
// mounts (Slack HTTP mode: /slack/events, /slack/install, /slack/oauth_redirect).
// Plain node:http: the routes are few and fixed, and Bolt's receivers speak (req, res) already.
//
// The port faces the internet, so nothing here trusts a client: every route has a body limit
// (checked on Content-Length before the handler runs; handlers that read count as they go),
// headers, bodies and whole requests have deadlines, and /metrics is rendered at most once a
// second however often it is polled.

export type RequestListener = ((req: IncomingMessage, res: ServerResponse) => void | Promise<void>) & {
  /**
   * The largest body this listener takes. A request that declares more (Content-Length) is refused
   * with 413 before the listener runs. Default DEFAULT_MOUNT_BODY_BYTES. A listener that reads a
   * chunked body must count the bytes itself: the server only sees the declared length.
   */
  maxBodyBytes?: number;
};

/** Body limit of a mounted route that does not declare one: small forms at most. */
export const DEFAULT_MOUNT_BODY_BYTES = 64 * 1024;

/** What /metrics needs: a PromBridgeMetrics, or anything with the same two members. */
export interface MetricsSource {
  text(): Promise<string>;
  readonly contentType: string;
}

export interface HttpServerOptions {
  host: string;
  port: number;
  logger: Logger;
  metrics: MetricsSource;
  readiness: Readiness;
  /** How long close() lets requests in flight finish before cutting their connections. Default 5000. */
  shutdownGraceMs?: number;
  /** A client must send its whole header block within this. Default 10000. */
  headersTimeoutMs?: number;
  /** A client must send its whole request (headers and body) within this. Default 30000. */
  requestTimeoutMs?: number;
  /** A request with a body must finish sending it within this after its headers: else 408. Default 10000. */
  bodyTimeoutMs?: number;
  /** How long one rendering of /metrics is served. Default 1000. */
  metricsCacheMs?: number;
  /** The clock of the /metrics cache (tests). */
  now?: () => number;
  /**
   * METRICS_PORT/METRICS_HOST: /metrics is served by a second server listening there, and no
   * longer on `port` (so the public port does not show the bridge's internals).
   */
  metricsListener?: { host: string; port: number };
  /** The built-in paths this server answers (the second server: metrics only). Default all. */
  serves?: readonly Builtin[];
}

export interface HttpServer {
  /** Requests whose path is `pathPrefix` or under `pathPrefix/` go to `listener`. */
  mount(pathPrefix: string, listener: RequestListener): void;
  /** `metricsPort`: the second server's, when `metricsListener` is set. */
  listen(): Promise<{ port: number; metricsPort?: number }>;
  /** Stops accepting, closes idle keep-alive connections, waits for requests in flight (bounded). */
  close(): Promise<void>;
}

export function createHttpServer(opts: HttpServerOptions): HttpServer {
  const { metricsListener, ...own } = opts;
  const metricsServer =
    metricsListener === undefined
      ? undefined
      : createHttpServer({ ...own, host: metricsListener.host, port: metricsListener.port, serves: ['metrics'] });
  const state: ServerState = { mounts: [], sockets: new Set(), active: new Set(), closing: false, listening: false };
  const requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
  const routes: Routes = {
    logger: opts.logger,
    mounts: state.mounts,
    serves: new Set<Builtin>(
      opts.serves ?? (metricsServer === undefined ? ['health', 'ready', 'metrics'] : ['health', 'ready']),
    ),
    bodyTimeoutMs: opts.bodyTimeoutMs ?? 10_000,
    readiness: opts.readiness,
    metrics: opts.metrics,
    metricsText: cachedText(opts.metrics, opts.metricsCacheMs ?? 1000, opts.now ?? Date.now),
  };
  const server = nodeServer(state, routes, {
    requestTimeoutMs,
    // node:http refuses a headers timeout longer than the request timeout.
    headersTimeoutMs: Math.min(opts.headersTimeoutMs ?? 10_000, requestTimeoutMs),
  });
  const closeOwn = () => closeServer(server, state, opts.shutdownGraceMs ?? 5000);

  return {
    mount(pathPrefix, listener) {
      const prefix = `/${pathPrefix.replace(/^\/+|\/+$/g, '')}`;
      state.mounts.push({ prefix, listener });
      state.mounts.sort((a, b) => b.prefix.length - a.prefix.length);
    },

    async listen() {
      const { port } = await listenServer(server, state, { host: opts.host, port: opts.port }, routes);
      if (metricsServer === undefined) return { port };
      try {
        return { port, metricsPort: (await metricsServer.listen()).port };
      } catch (err) {
        await closeOwn();
        throw err;
      }
    },

    async close() {
      await Promise.all([closeOwn(), metricsServer?.close()]);
    },
  };
}

/** What one server keeps while it runs: its routes, its connections, and where it is in its life. */
interface ServerState {
  /** Longest prefix first. */
  readonly mounts: Mount[];
  readonly sockets: Set<Socket>;
  /** The responses not closed yet: the requests in flight. */
  readonly active: Set<ServerResponse>;
  /** close() was called: connections end after their request. */
  closing: boolean;
  listening: boolean;
}

interface Mount {
  prefix: string;
  listener: RequestListener;
}

/** What answering one request reads. */
interface Routes {
  readonly logger: Logger;
  readonly mounts: readonly Mount[];
  readonly serves: ReadonlySet<Builtin>;
  readonly bodyTimeoutMs: number;
  readonly readiness: Readiness;
  readonly metrics: MetricsSource;
  /** /metrics's text, rendered at most once per metricsCacheMs. */
  readonly metricsText: () => Promise<string>;
}

/** The node:http server, counting its connections and requests in flight for closeServer. */
function nodeServer(
  state: ServerState,
  routes: Routes,
  timeouts: { headersTimeoutMs: number; requestTimeoutMs: number },
): Server {
  const { logger } = routes;
  const server: Server = createServer(
    {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      // How often node checks the two timeouts above (its default, 30 s, would double them).
      connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(timeouts.headersTimeoutMs / 4))),
    },
    (req, res) => {
      state.active.add(res);
      res.once('close', () => {
        state.active.delete(res);
        // A keep-alive connection that just finished its last request is idle now: let close() end.
        if (state.closing) setImmediate(() => server.closeIdleConnections());
      });
      if (state.closing) res.setHeader('connection', 'close');
      // A handler's synchronous throw and its rejected promise both end here, never in the process.
      try {
        handleRequest(req, res, routes).catch((err: unknown) => failRequest(res, err, logger));
      } catch (err) {
        failRequest(res, err, logger);
      }
    },
  );

  // Malformed requests (bad headers, garbage on the socket) and requests too slow to arrive
  // (headersTimeout, requestTimeout): answer and drop the connection.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    logger.debug({ code: err.code }, 'bad http request');
    if (socket.writable && err.code !== 'ECONNRESET') {
      const status = CLIENT_ERROR_STATUS[err.code ?? ''] ?? '400 Bad Request';
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    } else {
      socket.destroy();
    }
  });
  server.on('connection', (socket: Socket) => {
    state.sockets.add(socket);
    socket.once('close', () => state.sockets.delete(socket));
  });
  return server;
}

function failRequest(res: ServerResponse, err: unknown, logger: Logger): void {
  logger.error({ err }, 'http handler failed');
  if (!res.headersSent) sendJson(res, 500, { error: 'internal_error' });
  else res.destroy();
}

/** A mounted route if one matches the path, else a built-in endpoint, else 404. */
async function handleRequest(req: IncomingMessage, res: ServerResponse, routes: Routes): Promise<void> {
  const path = pathOf(req.url);
  // Longest prefix first, so `/slack/events` could be mounted apart from `/slack`.
  const mount = routes.mounts.find((m) => path === m.prefix || path.startsWith(`${m.prefix}/`));
  if (mount) await handleMounted(req, res, mount.listener, routes);
  else await handleBuiltin(req, res, path, routes);
}

/** A mounted route runs only if its body fits its limit, and the body has a deadline. */
async function handleMounted(
  req: IncomingMessage,
  res: ServerResponse,
  listener: RequestListener,
  routes: Routes,
): Promise<void> {
  const limit = listener.maxBodyBytes ?? DEFAULT_MOUNT_BODY_BYTES;
  const declared = declaredLength(req);
  if (declared === 'invalid') {
    refuse(res, 400, { error: 'bad_content_length' });
    return;
  }
  if (declared !== undefined && declared > limit) {
    refuse(res, 413, { error: 'body_too_large', limit });
    return;
  }
  if (hasBody(req)) bodyDeadline(req, res, routes.bodyTimeoutMs, routes.logger);
  await listener(req, res);
}

/** /healthz, /readyz and /metrics, when this server serves them. */
async function handleBuiltin(req: IncomingMessage, res: ServerResponse, path: string, routes: Routes): Promise<void> {
  const method = req.method ?? 'GET';
  const builtin = BUILTIN[path];
  if (builtin === undefined || !routes.serves.has(builtin)) {
    // Unknown paths do not get to send a body either: answered, then the connection closes.
    refuse(res, 404, { error: 'not_found', path }, hasBody(req));
    return;
  }
  // The operator endpoints take no body; one sent anyway is refused unread.
  if (hasBody(req)) {
    refuse(res, 413, { error: 'body_not_allowed' });
    return;
  }
  if (method !== 'GET' && method !== 'HEAD') {
    sendJson(res, 405, { error: 'method_not_allowed' }, { allow: 'GET, HEAD' });
    return;
  }
  switch (builtin) {
    case 'health':
      healthz(res);
      return;
    case 'ready':
      readyz(res, routes.readiness);
      return;
    case 'metrics': {
      const text = await routes.metricsText();
      res.writeHead(200, { 'content-type': routes.metrics.contentType, 'cache-control': 'no-store' });
      res.end(text);
      return;
    }
  }
}

/**
 * A body that is still arriving bodyTimeoutMs after its headers: 408 if nothing was answered yet,
 * and the connection is closed either way (a slow sender must not hold a socket and a handler).
 */
function bodyDeadline(req: IncomingMessage, res: ServerResponse, bodyTimeoutMs: number, logger: Logger): void {
  const timer = setTimeout(() => {
    if (req.complete) return;
    logger.debug({ path: pathOf(req.url) }, 'http request body too slow');
    // node forgets a request once its answer is sent, so a handler still reading the body
    // would wait forever: end the body (with an error) when the connection is gone.
    req.socket.once('close', () => {
      if (!req.complete) req.destroy();
    });
    if (!res.headersSent) refuse(res, 408, { error: 'body_timeout' });
    else req.socket.destroy();
  }, bodyTimeoutMs);
  timer.unref();
  const clear = () => clearTimeout(timer);
  req.once('end', clear);
  res.once('close', clear);
}

function listenServer(
  server: Server,
  state: ServerState,
  at: { host: string; port: number },
  routes: Routes,
): Promise<{ port: number }> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      reject(new Error(`HTTP server cannot listen on ${at.host}:${at.port}: ${err.code ?? err.message}`));
    };
    const onListening = () => {
      server.off('error', onError);
      state.listening = true;
      const addr = server.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : at.port;
      routes.logger.info({ host: at.host, port, serves: [...routes.serves] }, 'http server listening');
      resolve({ port });
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(at.port, at.host);
  });
}

/** Stops accepting, ends idle connections, and cuts the requests still running after graceMs. */
function closeServer(server: Server, state: ServerState, graceMs: number): Promise<void> {
  if (!state.listening) return Promise.resolve();
  state.listening = false;
  state.closing = true;
  for (const res of state.active) if (!res.headersSent) res.setHeader('connection', 'close');
  return new Promise<void>((resolve) => {
    const grace = setTimeout(() => {
      // Requests still running after the grace period: cut them, shutdown must finish.
      for (const s of state.sockets) s.destroy();
    }, graceMs);
    grace.unref();
    server.close(() => {
      clearTimeout(grace);
      resolve();
    });
    server.closeIdleConnections();
  });
}

const CLIENT_ERROR_STATUS: Record<string, string | undefined> = {
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
};

/**
 * Answers without reading the body and closes the connection once the answer is out: node would
 * otherwise read (and drop) the rest of the body to keep the connection alive.
 */
function refuse(res: ServerResponse, status: number, body: unknown, close = true): void {
  sendJson(res, status, body, close ? { connection: 'close' } : {});
}

/** Whether the request carries a body (a length above zero, or chunked). */
export function hasBody(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const declared = declaredLength(req);
  return declared === 'invalid' || (declared !== undefined && declared > 0);
}

/** The Content-Length of a request: undefined when absent, 'invalid' when not a plain number. */
export function declaredLength(req: IncomingMessage): number | undefined | 'invalid' {
  const raw = req.headers['content-length'];
  if (raw === undefined) return undefined;
  return /^\d{1,15}$/.test(raw) ? Number(raw) : 'invalid';
}

/**
 * The metrics text, rendered at most once per `ttlMs`: a scraper polling a thousand times a second
 * costs one rendering a second, and concurrent polls share the rendering in progress.
 */
export function cachedText(source: MetricsSource, ttlMs: number, now: () => number): () => Promise<string> {
  let cached: { text: string; at: number } | undefined;
  let rendering: Promise<string> | undefined;
  return () => {
    const t = now();
    if (cached && t - cached.at < ttlMs && t >= cached.at) return Promise.resolve(cached.text);
    rendering ??= source
      .text()
      .then((rendered) => {
        // Label values can come from outside (an upstream's error code): never a configured secret.
        const text = scrubSecrets(rendered);
        cached = { text, at: t };
        return text;
      })
      .finally(() => {
        rendering = undefined;
      });
    return rendering;
  };
}

/** The operator endpoints every server of the process may answer. */
export type Builtin = 'health' | 'ready' | 'metrics';

const BUILTIN: Record<string, Builtin | undefined> = {
  '/healthz': 'health',
  '/readyz': 'ready',
  '/metrics': 'metrics',
};

/**
 * The path of a request target, without query or fragment. Parsed by hand: `new URL('//x', base)`
 * would read `x` as a host name.
 */
function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const end = raw.search(/[?#]/);
  const path = end === -1 ? raw : raw.slice(0, end);
  return path === '' ? '/' : path;
}

// The operator endpoints' answers, and the JSON answer every route (the playground's too) sends.

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

function healthz(res: ServerResponse): void {
  sendJson(res, 200, { status: 'ok' });
}

function readyz(res: ServerResponse, readiness: Readiness): void {
  let report: ReturnType<Readiness>;
  try {
    report = readiness();
  } catch (err) {
    // A broken readiness function means we cannot vouch for the process: not ready, not a crash.
    const reason = err instanceof Error ? err.message : String(err);
    sendJson(res, 503, { status: 'not_ready', notReady: ['readiness'], checks: { readiness: reason } });
    return;
  }
  if (report.ready) {
    sendJson(res, 200, { status: 'ready', checks: report.checks });
  } else {
    // `ready: false` with every check passing still needs a name to show: call it `process`.
    const names = notReady(report.checks);
    sendJson(res, 503, {
      status: 'not_ready',
      notReady: names.length > 0 ? names : ['process'],
      checks: report.checks,
    });
  }
}
