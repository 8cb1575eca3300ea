import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// A transparent loopback proxy in front of the emulator that notes, per reply, when the
// upstream wrote its first text and when its body ended. The emulator has no hooks for that,
// and reading the bytes on the wire is what "the upstream's first chunk" means anyway.
// Replies are keyed by a tag in the user's message (`bench-<tag>` unless `tagPattern` says
// otherwise). Used by the bench and by integration tests that measure time to final text.

export interface UpstreamTiming {
  tag: string;
  /** The request reached the proxy. */
  requestAt: number;
  /** The first body bytes holding reply text (an SSE `delta` event) went out to the bridge. */
  firstChunkAt?: number;
  /** The first body bytes holding an agent's step (the seed's `status` event) went out to the bridge. */
  firstStepAt?: number;
  /** The upstream body ended. */
  endAt?: number;
  status?: number;
}

const TAG_RE = /bench-([A-Za-z0-9_-]+)/;
/** A step in the seed's shapes: `event: status` (SSE) or a `status` line (NDJSON). */
const STEP_RE = /^event: status$|"type":"status"/m;

export interface TimingProxyOptions {
  /** Finds a reply's tag in the request body: the first capture group. */
  tagPattern?: RegExp;
}

export interface TimingProxy {
  url: string;
  timings: Map<string, UpstreamTiming>;
  /** Resolves once `n` tagged replies have ended (rejects after `timeoutMs`). */
  waitEnded(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startTimingProxy(target: string, opts: TimingProxyOptions = {}): Promise<TimingProxy> {
  const tagRe = opts.tagPattern ?? TAG_RE;
  const t = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const timings = new Map<string, UpstreamTiming>();
  let ended = 0;
  let waiters: { n: number; resolve: () => void }[] = [];
  const noteEnd = () => {
    ended += 1;
    for (const w of waiters.filter((x) => ended >= x.n)) w.resolve();
    waiters = waiters.filter((x) => ended < x.n);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const tag = tagRe.exec(body.toString('utf8'))?.[1];
      const timing: UpstreamTiming | undefined = tag === undefined ? undefined : { tag, requestAt: Date.now() };
      if (timing) timings.set(timing.tag, timing);
      const headers = { ...req.headers, host: t.host };
      const up = request(
        { host: t.hostname, port: t.port, method: req.method, path: req.url, headers, agent },
        (upRes) => {
          if (timing) timing.status = upRes.statusCode ?? 0;
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          res.flushHeaders();
          upRes.on('data', (c: Buffer) => {
            if (timing && timing.firstChunkAt === undefined && c.includes('"delta"')) timing.firstChunkAt = Date.now();
            if (timing && timing.firstStepAt === undefined && STEP_RE.test(c.toString('latin1')))
              timing.firstStepAt = Date.now();
            res.write(c);
          });
          upRes.on('end', () => {
            if (timing) {
              timing.endAt = Date.now();
              noteEnd();
            }
            res.end();
          });
          upRes.on('error', () => res.destroy());
        },
      );
      up.on('error', () => res.destroy());
      res.on('close', () => {
        if (!res.writableEnded) up.destroy();
      });
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    timings,
    waitEnded(n, timeoutMs = 60_000) {
      if (ended >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`timing proxy: ${ended}/${n} replies ended in time`)),
          timeoutMs,
        );
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    async close() {
      server.closeAllConnections();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
