import type { ServerResponse } from 'node:http';
import { notReady, type Readiness } from './readiness.js';

// The operator endpoints' answers. Kept apart from the routing so each is easy to test alone.

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

export function healthz(res: ServerResponse): void {
  sendJson(res, 200, { status: 'ok' });
}

export function readyz(res: ServerResponse, readiness: Readiness): void {
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
