import type { IncomingMessage, ServerResponse } from 'node:http';
import { UserRateLimiter } from '../../core/intake/admission.js';
import { type RequestListener, sendJson } from '../../server/http-server.js';
import { createGuard, userIdOf } from './guard.js';
import { FAVICON_SVG, sendText } from './page-serve.js';
import { PAGE_CSS } from './page.js';
import { PAGE_JS } from './page-script.js';
import { serveVendor } from './vendor.js';
import { createStreams, STREAM_LIMITS } from './streams.js';
import { type PlaygroundHttpOptions, pathOf, refuse, type RoutesContext, wrongToken } from './routes-context.js';
import { servePage, serveFavicon } from './page-route.js';
import { readHistory } from './history-route.js';
import { type ApiCall, claim, openEvents, reset, sendMessage, stop, vote } from './api-actions.js';

// The playground's routes on the bridge's HTTP server: `/` and `/playground` (the page, see
// page-route.ts), `/playground/app.js`, `/playground/app.css`, `/playground/icon.svg` (also
// `/favicon.ico`), `/playground/vendor/<file>` (vendor.ts: the Markdown renderer and sanitizer),
// `/playground/api/{send,stop,vote,reset}` (api-actions.ts), `/playground/api/history`
// (history-route.ts) and the SSE stream of a conversation's writes and turns,
// `/playground/events?conversation=ID`. This file admits a request and sends it on.
// It spends the operator's API key: guard.ts says who may drive it, streams.ts bounds the event
// streams, conversation-table.ts the conversations kept. A refused request does nothing at all:
// every check runs before the body is read or the connector is called.

const MAX_BODY = 64 * 1024;

export type { PlaygroundHttpOptions } from './routes-context.js';

/** The browsers one address is given room for (a household, an office behind one NAT): streams and messages. */
export const ADDRESS_BROWSERS = 4;

export interface PlaygroundRoutes {
  page: RequestListener;
  /** `/favicon.ico`: the playground's icon (browsers ask for it whatever the page names). */
  favicon: RequestListener;
  api: RequestListener;
  /** Ends every open event stream (shutdown). */
  close(): void;
}

export { isLoopback } from './guard.js';

/** The writes under `/playground/api/`, by path. */
const WRITES: Record<string, (ctx: RoutesContext, call: ApiCall) => Promise<void>> = {
  '/playground/api/send': sendMessage,
  '/playground/api/stop': stop,
  '/playground/api/vote': vote,
  '/playground/api/reset': reset,
};

export function createPlaygroundRoutes(opts: PlaygroundHttpOptions): PlaygroundRoutes {
  const ctx: RoutesContext = {
    opts,
    connector: opts.connector,
    logger: opts.logger,
    guard: createGuard({
      allowRemote: opts.allowRemote,
      ...(opts.token !== undefined ? { token: opts.token } : {}),
      ...(opts.publicHosts !== undefined ? { publicHosts: opts.publicHosts } : {}),
      ...(opts.bindHost !== undefined ? { bindHost: opts.bindHost } : {}),
      ...(opts.addresses !== undefined ? { addresses: opts.addresses } : {}),
      ...(opts.trustProxy !== undefined ? { trustProxy: opts.trustProxy } : {}),
      ...(opts.guessLimits !== undefined ? { guessLimits: opts.guessLimits } : {}),
    }),
    perAddress: new UserRateLimiter(opts.messagesPerAddressPerMinute ?? ADDRESS_BROWSERS * 20),
    streams: createStreams({ ...STREAM_LIMITS, ...opts.streamLimits }, opts.clock),
  };
  const api: RequestListener = (req, res) => serveApi(ctx, req, res);
  api.maxBodyBytes = MAX_BODY;
  return {
    page: (req, res) => servePage(ctx, req, res),
    favicon: (req, res) => serveFavicon(ctx, req, res),
    api,
    close: () => ctx.streams.close(),
  };
}

/** Everything under `/playground`: admitted, then the page, an asset, a read or a write. */
async function serveApi(ctx: RoutesContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = pathOf(req);
  const method = req.method ?? 'GET';
  if (path === '/playground' || path === '/playground/') return servePage(ctx, req, res);
  const admitted = ctx.guard.admit(req);
  if ('refused' in admitted) {
    if (admitted.refused === 'wrong_token') wrongToken(ctx, admitted.address, 'bearer');
    return refuse(ctx, req, res, admitted.refused, admitted.retryAfterS);
  }
  if (serveAsset(req, res, method, path)) return;
  const isRead = path === '/playground/events' || path === '/playground/api/history';
  const write = WRITES[path];
  if (method !== (isRead ? 'GET' : 'POST') || !(isRead || path.startsWith('/playground/api/'))) {
    // Preflights (OPTIONS) land here too: no CORS header, so no other origin gets further.
    sendJson(res, method === 'GET' || method === 'POST' ? 404 : 405, { error: 'not_found' }, { connection: 'close' });
    return;
  }
  const caller = admitted.caller;
  const refusal = ctx.guard.api(req, caller, !isRead);
  if (refusal !== undefined) return refuse(ctx, req, res, refusal);
  const user = userIdOf(caller);
  ctx.streams.touch(user);
  try {
    if (isRead) {
      const conversation = new URL(req.url ?? '/', 'http://playground.local').searchParams.get('conversation') ?? '';
      if (!(await claim(ctx, res, conversation, user, false))) return;
      if (path === '/playground/events') openEvents(ctx, res, conversation, caller, user);
      else
        sendJson(res, 200, {
          ...(await readHistory(ctx, conversation, user)),
          working: ctx.connector.underway(conversation),
        });
      return;
    }
    const body = await readJson(req);
    if (body === undefined) sendJson(res, 400, { error: 'bad_json' });
    else if (write === undefined) sendJson(res, 404, { error: 'not_found' });
    else await write(ctx, { res, body, caller, user });
  } catch (err) {
    ctx.logger.warn({ err: err instanceof Error ? err.message : String(err), path }, 'playground: request failed');
    if (!res.headersSent) sendJson(res, 502, { error: 'failed', detail: err instanceof Error ? err.message : 'error' });
  }
}

/** The page's script, style, icon and vendored libraries: answered and true, else false. */
function serveAsset(req: IncomingMessage, res: ServerResponse, method: string, path: string): boolean {
  if (method === 'GET' && path === '/playground/app.js') sendText(res, 200, 'text/javascript; charset=utf-8', PAGE_JS);
  else if (method === 'GET' && path === '/playground/icon.svg')
    sendText(res, 200, 'image/svg+xml', FAVICON_SVG, { 'cache-control': 'public, max-age=86400' });
  else if (method === 'GET' && path === '/playground/app.css') sendText(res, 200, 'text/css; charset=utf-8', PAGE_CSS);
  else if ((method === 'GET' || method === 'HEAD') && path.startsWith('/playground/vendor/')) {
    if (!serveVendor(req, res, path.slice('/playground/vendor/'.length))) sendJson(res, 404, { error: 'not_found' });
  } else return false;
  return true;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_BODY) return undefined;
    chunks.push(b);
  }
  try {
    const v: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
