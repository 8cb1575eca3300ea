import { createServer, type IncomingMessage, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// A loopback HTTP proxy in front of a fake platform's REST/Web API, so a test can make the
// platform misbehave for a while (429 storms, an API that is down) without changing the fake.

export interface Intercept {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** Return an answer to give instead of forwarding, 'destroy' to cut the connection, or undefined to forward. */
export type Interceptor = (req: IncomingMessage) => Intercept | 'destroy' | undefined;

export interface ApiProxy {
  /** The target URL with the proxy's origin (same path). */
  url: string;
  intercept: Interceptor | undefined;
  /** Requests answered by the interceptor. */
  intercepted: number;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<ApiProxy> {
  const origin = new URL(target);
  const proxy = { intercept: undefined as Interceptor | undefined, intercepted: 0 };
  const server: Server = createServer((req, res) => {
    const verdict = proxy.intercept?.(req);
    if (verdict === 'destroy') {
      proxy.intercepted++;
      req.socket.destroy();
      return;
    }
    if (verdict !== undefined) {
      proxy.intercepted++;
      req.resume();
      res.writeHead(verdict.status, verdict.headers ?? {});
      res.end(verdict.body ?? '');
      return;
    }
    const up = httpRequest(
      {
        host: origin.hostname,
        port: origin.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: origin.host },
      },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${port}${origin.pathname}${origin.search}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** Discord's answer to a rate-limited message write, with its headers and body. */
export function discord429(retryAfterS: number): Intercept {
  return {
    status: 429,
    headers: {
      'content-type': 'application/json',
      'retry-after': String(Math.ceil(retryAfterS)),
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset-after': retryAfterS.toFixed(3),
      'x-ratelimit-reset': ((Date.now() + retryAfterS * 1000) / 1000).toFixed(3),
      'x-ratelimit-bucket': 'channel-messages',
      'x-ratelimit-scope': 'user',
    },
    body: JSON.stringify({ message: 'You are being rate limited.', retry_after: retryAfterS, global: false }),
  };
}
