import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../logger.js';
import { rawRequest } from '../../test/fakes/raw-http.js';
import { createHttpServer, type HttpServer, type HttpServerOptions } from './http-server.js';
import { createMetrics } from './metrics.js';
import type { CheckValue } from './readiness.js';

const servers: HttpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(checks: Record<string, CheckValue> = { database: true }, over: Partial<HttpServerOptions> = {}) {
  const metrics = createMetrics({ defaultMetrics: false });
  const state = { checks };
  const server = createHttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: silentLogger,
    metrics,
    readiness: () => ({ ready: Object.values(state.checks).every((v) => v === true), checks: state.checks }),
    ...over,
  });
  servers.push(server);
  const { port } = await server.listen();
  return { server, metrics, state, port, base: `http://127.0.0.1:${port}` };
}

describe('/metrics on its own listener (METRICS_PORT)', () => {
  it('serves /metrics only there, and PORT no longer does; both close together', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const server = createHttpServer({
      host: '127.0.0.1',
      port: 0,
      logger: silentLogger,
      metrics,
      readiness: () => ({ ready: true, checks: {} }),
      metricsListener: { host: '127.0.0.1', port: 0 },
    });
    const { port, metricsPort } = await server.listen();
    expect(metricsPort).toBeGreaterThan(0);
    expect(metricsPort).not.toBe(port);
    const main = `http://127.0.0.1:${port}`;
    const side = `http://127.0.0.1:${metricsPort}`;
    expect((await fetch(`${main}/metrics`)).status).toBe(404);
    expect((await fetch(`${main}/healthz`)).status).toBe(200);
    expect((await fetch(`${main}/readyz`)).status).toBe(200);
    const scraped = await fetch(`${side}/metrics`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('bridge_');
    expect((await fetch(`${side}/healthz`)).status).toBe(404);
    expect((await fetch(`${side}/slack/events`, { method: 'POST', body: '{}' })).status).toBe(404);
    await server.close();
    await expect(fetch(`${side}/metrics`)).rejects.toThrow();
    await expect(fetch(`${main}/healthz`)).rejects.toThrow();
  });

  it('a metrics port that cannot listen fails listen() and leaves nothing listening', async () => {
    const first = await start();
    const server = createHttpServer({
      host: '127.0.0.1',
      port: 0,
      logger: silentLogger,
      metrics: createMetrics({ defaultMetrics: false }),
      readiness: () => ({ ready: true, checks: {} }),
      metricsListener: { host: '127.0.0.1', port: first.port },
    });
    await expect(server.listen()).rejects.toThrow(/cannot listen on 127\.0\.0\.1/);
    await server.close();
  });
});

describe('http server', () => {
  it('answers /healthz with 200 {"status":"ok"}', async () => {
    const { base } = await start();
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz 503 naming what is not ready, then 200 once it is', async () => {
    const { base, state } = await start({ database: true, slack: false, discord: 'gateway not connected' });
    const before = await fetch(`${base}/readyz`);
    expect(before.status).toBe(503);
    expect(await before.json()).toEqual({
      status: 'not_ready',
      notReady: ['slack', 'discord'],
      checks: { database: true, slack: false, discord: 'gateway not connected' },
    });

    state.checks = { database: true, slack: true, discord: true };
    const after = await fetch(`${base}/readyz`);
    expect(after.status).toBe(200);
    expect(await after.json()).toEqual({ status: 'ready', checks: { database: true, slack: true, discord: true } });
  });

  it('answers /readyz 503 when the readiness function throws', async () => {
    const server = createHttpServer({
      host: '127.0.0.1',
      port: 0,
      logger: silentLogger,
      metrics: createMetrics({ defaultMetrics: false }),
      readiness: () => {
        throw new Error('store closed');
      },
    });
    servers.push(server);
    const { port } = await server.listen();
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: 'not_ready', checks: { readiness: 'store closed' } });
  });

  it('serves the metrics text with the series recorded so far', async () => {
    const { base, metrics } = await start();
    metrics.replyStarted('slack');
    metrics.replyFinished('slack');
    metrics.replyFailed('discord', 'unauthorized');
    metrics.upstreamFirstToken('slack', 0.12);
    metrics.platformWrite('discord', 'edit');
    metrics.platformRateLimited('discord', 'discord:channel:123456789012345678');
    metrics.queueDepth(3);

    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain('bridge_replies_started_total{platform="slack"} 1');
    expect(text).toContain('bridge_replies_finished_total{platform="slack"} 1');
    expect(text).toContain('bridge_replies_failed_total{platform="discord",reason="unauthorized"} 1');
    expect(text).toContain('bridge_upstream_first_token_seconds_bucket{le="0.25",platform="slack"} 1');
    expect(text).toContain('bridge_platform_writes_total{platform="discord",kind="edit"} 1');
    expect(text).toContain('bridge_platform_rate_limited_total{platform="discord",bucket="discord:channel"} 1');
    expect(text).toContain('bridge_queue_depth 3');
  });

  it('delegates mounted prefixes and answers anything else with a 404 JSON', async () => {
    const { base, server } = await start();
    const seen: string[] = [];
    server.mount('/slack', (req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(204).end();
    });

    expect((await fetch(`${base}/slack/events`, { method: 'POST', body: '{}' })).status).toBe(204);
    expect((await fetch(`${base}/slack/install?x=1`)).status).toBe(204);
    expect(seen).toEqual(['POST /slack/events', 'GET /slack/install?x=1']);

    const other = await fetch(`${base}/slackware`);
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ error: 'not_found', path: '/slackware' });
    expect((await fetch(`${base}/`)).status).toBe(404);
  });

  it('answers 500 when a mounted handler throws, and keeps serving', async () => {
    const { base, server } = await start();
    server.mount('/sync', () => {
      throw new Error('boom');
    });
    server.mount('/async', async () => {
      throw new Error('boom');
    });
    expect((await fetch(`${base}/sync`)).status).toBe(500);
    expect((await fetch(`${base}/async/x`)).status).toBe(500);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('refuses other methods on its own paths and survives garbage on the socket', async () => {
    const { base } = await start();
    const post = await fetch(`${base}/healthz`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');

    const { port } = new URL(base);
    const reply = await new Promise<string>((resolve, reject) => {
      const sock = connect(Number(port), '127.0.0.1', () => sock.write('NOT HTTP AT ALL\r\n\r\n'));
      let data = '';
      sock.on('data', (d) => {
        data += d.toString();
      });
      sock.on('close', () => resolve(data));
      sock.on('error', reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect((await fetch(`${base}//healthz`)).status).toBe(404);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('closes promptly with an idle keep-alive connection open, and lets a request in flight finish', async () => {
    const { base, server } = await start();
    let release!: () => void;
    const entered = new Promise<void>((resolveEntered) => {
      server.mount('/slow', (_req, res) => {
        resolveEntered();
        release = () => res.end('done');
      });
    });
    // An idle keep-alive connection (fetch keeps its socket) must not hold close() up.
    await (await fetch(`${base}/healthz`)).text();

    const slow = fetch(`${base}/slow`).then((r) => r.text());
    await entered;
    const closed = server.close();
    release();
    expect(await slow).toBe('done');
    await closed;
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });

  it('rejects listen with a clear message when the port is taken', async () => {
    const { base } = await start();
    const other = createHttpServer({
      host: '127.0.0.1',
      port: Number(new URL(base).port),
      logger: silentLogger,
      metrics: createMetrics({ defaultMetrics: false }),
      readiness: () => ({ ready: true, checks: {} }),
    });
    await expect(other.listen()).rejects.toThrow(/cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/);
  });
});

describe('http server facing hostile clients', () => {
  const MB = 1024 * 1024;

  it('renders /metrics once per second however often it is polled', async () => {
    let t = 5_000;
    let renders = 0;
    const metrics = {
      contentType: 'text/plain; version=0.0.4; charset=utf-8',
      text: async () => `render_number ${++renders}\n`,
    };
    const { base } = await start({ database: true }, { metrics, now: () => t });
    const first = await fetch(`${base}/metrics`);
    expect(await first.text()).toBe('render_number 1\n');
    t += 999;
    const polls = await Promise.all(Array.from({ length: 20 }, () => fetch(`${base}/metrics`).then((r) => r.text())));
    expect(new Set(polls)).toEqual(new Set(['render_number 1\n']));
    expect(renders).toBe(1);

    t += 1;
    expect(await (await fetch(`${base}/metrics`)).text()).toBe('render_number 2\n');
    expect(renders).toBe(2);
  });

  it('refuses a body on its own endpoints with 413 before reading it, and closes', async () => {
    const { port } = await start();
    const res = await rawRequest({
      port,
      head: `GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: ${100 * MB}`,
      bodyBytes: 2 * MB,
    });
    expect(res.status).toBe(413);
    expect(res.closed).toBe(true);
    expect(res.sent).toBeLessThan(100 * MB);
  });

  it("refuses a mounted route's declared oversize body with 413 before the listener runs", async () => {
    const { port, server } = await start();
    let called = 0;
    const listener = Object.assign(
      (_req: unknown, res: ServerResponse) => {
        called += 1;
        res.end('ok');
      },
      { maxBodyBytes: MB },
    );
    server.mount('/big', listener);
    server.mount('/small', (_req, res) => {
      called += 1;
      res.end('ok');
    });
    const big = await rawRequest({
      port,
      head: `POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: ${MB + 1}`,
      bodyBytes: 2 * MB,
    });
    expect(big.status).toBe(413);
    expect(big.closed).toBe(true);
    // Undeclared mounts take small bodies only.
    const small = await rawRequest({
      port,
      head: `POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: ${128 * 1024}`,
      bodyBytes: 16 * 1024,
    });
    expect(small.status).toBe(413);
    const bad = await rawRequest({ port, head: `POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 12abc` });
    expect(bad.status).toBe(400);
    expect(called).toBe(0);
  });

  it('answers 408 and closes when a body stops arriving', async () => {
    const { port, server } = await start({ database: true }, { bodyTimeoutMs: 300 });
    let readFailed = false;
    server.mount('/upload', async (req, res) => {
      try {
        for await (const _chunk of req) void _chunk;
        res.end('read');
      } catch {
        readFailed = true;
      }
    });
    const startedAt = Date.now();
    const res = await rawRequest({
      port,
      head: 'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100',
      body: 'ten bytes!',
      waitMs: 3000,
    });
    expect(res.status).toBe(408);
    expect(res.closed).toBe(true);
    // End-to-end bound, reason: the server's request timeout (600 ms) ended it, well before the
    // client would have given up (3 s); 408 and the closed socket say who ended it.
    expect(Date.now() - startedAt).toBeLessThan(2500);
    await expect.poll(() => readFailed).toBe(true);
  });

  it('drops a client whose headers never end', async () => {
    const { port } = await start({ database: true }, { headersTimeoutMs: 300, requestTimeoutMs: 600 });
    const startedAt = Date.now();
    const res = await rawRequest({
      port,
      head: 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: 1',
      unfinishedHead: true,
      waitMs: 4000,
    });
    expect(res.closed).toBe(true);
    expect(res.status).toBe(408);
    // End-to-end bound, reason: the headers timeout (300 ms) ended it, not the client's 4 s wait.
    expect(Date.now() - startedAt).toBeLessThan(3000);
  });
});
