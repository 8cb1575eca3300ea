import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../logger.js';
import { healthz, readyz, sendJson } from './health.js';
import type { Readiness } from './readiness.js';

// The one HTTP server of the process: /healthz, /readyz, /metrics, and whatever a connector
// mounts (Slack HTTP mode: /slack/events, /slack/install, /slack/oauth_redirect).
// Plain node:http: the routes are few and fixed, and Bolt's receivers speak (req, res) already.

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

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
}

export interface HttpServer {
  /** Requests whose path is `pathPrefix` or under `pathPrefix/` go to `listener`. */
  mount(pathPrefix: string, listener: RequestListener): void;
  listen(): Promise<{ port: number }>;
  /** Stops accepting, closes idle keep-alive connections, waits for requests in flight (bounded). */
  close(): Promise<void>;
}

export function createHttpServer(opts: HttpServerOptions): HttpServer {
  const { logger } = opts;
  const mounts: { prefix: string; listener: RequestListener }[] = [];
  const sockets = new Set<Socket>();
  const active = new Set<ServerResponse>();
  let closing = false;

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
      await mount.listener(req, res);
      return;
    }

    const builtin = BUILTIN[path];
    if (builtin === undefined) {
      sendJson(res, 404, { error: 'not_found', path });
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
        const text = await opts.metrics.text();
        res.writeHead(200, { 'content-type': opts.metrics.contentType, 'cache-control': 'no-store' });
        res.end(text);
        return;
      }
    }
  };

  const server: Server = createServer((req, res) => {
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
  });

  // Malformed requests (bad headers, garbage on the socket): answer 400 and drop the connection.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    logger.debug({ code: err.code }, 'bad http request');
    if (socket.writable && err.code !== 'ECONNRESET') {
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
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

    listen() {
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
          logger.info({ host: opts.host, port }, 'http server listening');
          resolve({ port });
        };
        server.once('error', onError);
        server.once('listening', onListening);
        server.listen(opts.port, opts.host);
      });
    },

    close() {
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
    },
  };
}

const BUILTIN: Record<string, 'health' | 'ready' | 'metrics' | undefined> = {
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
