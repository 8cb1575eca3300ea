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
  const { logger } = opts;
  const { metricsListener, ...own } = opts;
  const metricsServer =
    metricsListener === undefined
      ? undefined
      : createHttpServer({ ...own, host: metricsListener.host, port: metricsListener.port, serves: ['metrics'] });
  const serves = new Set<Builtin>(
    opts.serves ?? (metricsServer === undefined ? ['health', 'ready', 'metrics'] : ['health', 'ready']),
  );
  const mounts: { prefix: string; listener: RequestListener }[] = [];
  const sockets = new Set<Socket>();
  const active = new Set<ServerResponse>();
  let closing = false;

  const now = opts.now ?? Date.now;
  const requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
  // node:http refuses a headers timeout longer than the request timeout.
  const headersTimeoutMs = Math.min(opts.headersTimeoutMs ?? 10_000, requestTimeoutMs);
  const bodyTimeoutMs = opts.bodyTimeoutMs ?? 10_000;
  const metricsText = cachedText(opts.metrics, opts.metricsCacheMs ?? 1000, now);

  const fail = (res: ServerResponse, err: unknown) => {
    logger.error({ err }, 'http handler failed');
    if (!res.headersSent) sendJson(res, 500, { error: 'internal_error' });
    else res.destroy();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = pathOf(req.url);
    const method = req.method ?? 'GET';

    // Longest prefix first, so `/slack/events` could be mounted apart from `/slack`.
    const mount = mounts.find((m) => path === m.prefix || path.startsWith(`${m.prefix}/`));
    if (mount) {
      const limit = mount.listener.maxBodyBytes ?? DEFAULT_MOUNT_BODY_BYTES;
      const declared = declaredLength(req);
      if (declared === 'invalid') {
        refuse(res, 400, { error: 'bad_content_length' });
        return;
      }
      if (declared !== undefined && declared > limit) {
        refuse(res, 413, { error: 'body_too_large', limit });
        return;
      }
      if (hasBody(req)) bodyDeadline(req, res);
      await mount.listener(req, res);
      return;
    }

    const builtin = BUILTIN[path];
    if (builtin === undefined || !serves.has(builtin)) {
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
        readyz(res, opts.readiness);
        return;
      case 'metrics': {
        const text = await metricsText();
        res.writeHead(200, { 'content-type': opts.metrics.contentType, 'cache-control': 'no-store' });
        res.end(text);
        return;
      }
    }
  };

  /**
   * A body that is still arriving bodyTimeoutMs after its headers: 408 if nothing was answered yet,
   * and the connection is closed either way (a slow sender must not hold a socket and a handler).
   */
  const bodyDeadline = (req: IncomingMessage, res: ServerResponse) => {
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
  };

  const server: Server = createServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      // How often node checks the two timeouts above (its default, 30 s, would double them).
      connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(headersTimeoutMs / 4))),
    },
    (req, res) => {
      active.add(res);
      res.once('close', () => {
        active.delete(res);
        // A keep-alive connection that just finished its last request is idle now: let close() end.
        if (closing) setImmediate(() => server.closeIdleConnections());
      });
      if (closing) res.setHeader('connection', 'close');
      // A handler's synchronous throw and its rejected promise both end here, never in the process.
      try {
        handle(req, res).catch((err: unknown) => fail(res, err));
      } catch (err) {
        fail(res, err);
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
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  let listening = false;

  return {
    mount(pathPrefix, listener) {
      const prefix = `/${pathPrefix.replace(/^\/+|\/+$/g, '')}`;
      mounts.push({ prefix, listener });
      mounts.sort((a, b) => b.prefix.length - a.prefix.length);
    },

    async listen() {
      const { port } = await listenOwn();
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

  function listenOwn(): Promise<{ port: number }> {
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException) => {
        server.off('listening', onListening);
        reject(new Error(`HTTP server cannot listen on ${opts.host}:${opts.port}: ${err.code ?? err.message}`));
      };
      const onListening = () => {
        server.off('error', onError);
        listening = true;
        const addr = server.address();
        const port = typeof addr === 'object' && addr !== null ? addr.port : opts.port;
        logger.info({ host: opts.host, port, serves: [...serves] }, 'http server listening');
        resolve({ port });
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen(opts.port, opts.host);
    });
  }

  function closeOwn(): Promise<void> {
    if (!listening) return Promise.resolve();
    listening = false;
    closing = true;
    for (const res of active) if (!res.headersSent) res.setHeader('connection', 'close');
    return new Promise<void>((resolve) => {
      const grace = setTimeout(() => {
        // Requests still running after the grace period: cut them, shutdown must finish.
        for (const s of sockets) s.destroy();
      }, opts.shutdownGraceMs ?? 5000);
      grace.unref();
      server.close(() => {
        clearTimeout(grace);
        resolve();
      });
      server.closeIdleConnections();
    });
  }
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
