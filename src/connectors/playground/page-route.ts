import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../../server/http-server.js';
import type { Caller } from './guard.js';
import { bouncePage, FAVICON_SVG, pageWithToken, refusalPage, sendText } from './page-serve.js';
import { DETAIL, refuse, type RoutesContext, wrongToken } from './routes-context.js';

// The page's own routes: `/` and `/playground` (the page: `?token=` sets the credential cookie, a
// browser gets its id cookie here) and `/favicon.ico`. A refusal is a small HTML page, not JSON.

const HTML = 'text/html; charset=utf-8';

export function servePage(ctx: RoutesContext, req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendJson(res, 405, { error: 'method_not_allowed' }, { allow: 'GET, HEAD', connection: 'close' });
    return;
  }
  const url = new URL(req.url ?? '/', 'http://playground.local');
  const admitted = ctx.guard.admit(req);
  if ('refused' in admitted && admitted.refused === 'wrong_token') wrongToken(ctx, admitted.address, 'bearer');
  if ('refused' in admitted && admitted.refused !== 'unauthenticated') {
    ctx.logger.debug({ reason: admitted.refused }, 'playground: page refused');
    const status = admitted.refused === 'too_many_guesses' ? 429 : admitted.refused === 'wrong_token' ? 401 : 403;
    const retry: Record<string, string> =
      admitted.retryAfterS !== undefined ? { 'retry-after': String(admitted.retryAfterS) } : {};
    sendText(res, status, HTML, refusalPage(DETAIL[admitted.refused]), retry);
    return;
  }
  const where = 'refused' in admitted ? admitted : admitted.caller;
  if (tokenGiven(ctx, res, url, where)) return;
  if ('refused' in admitted) {
    sendText(res, 401, HTML, refusalPage(DETAIL.unauthenticated));
    return;
  }
  pageFor(ctx, req, res, url, admitted.caller);
}

/** `?token=` in the address: answered (a bounce with the cookie, or a refusal) and true; else false. */
function tokenGiven(
  ctx: RoutesContext,
  res: ServerResponse,
  url: URL,
  where: Pick<Caller, 'address' | 'secure' | 'https'>,
): boolean {
  const given = ctx.guard.tokenParam(url.searchParams.get('token'), where.address);
  if (typeof given === 'object') {
    sendText(res, 429, HTML, refusalPage(DETAIL.too_many_guesses), { 'retry-after': String(given.retryAfterS) });
    return true;
  }
  if (given === 'wrong') {
    wrongToken(ctx, where.address, 'page');
    sendText(res, 403, HTML, refusalPage(DETAIL.wrong_token));
    return true;
  }
  if (given === 'right') {
    // The token leaves the address bar: the bounce loads `/` from this page, with the cookie.
    sendText(res, 200, HTML, bouncePage('/'), { 'set-cookie': ctx.guard.authCookies(where) });
    return true;
  }
  return false;
}

/** The page itself, with the browser's page token (and its id cookie when it has none yet). */
function pageFor(ctx: RoutesContext, req: IncomingMessage, res: ServerResponse, url: URL, caller: Caller): void {
  let uid = caller.uid;
  const headers: Record<string, string[]> = {};
  if (uid === undefined) {
    // Arriving from another site, a SameSite=Strict cookie is not sent even when the browser has
    // one: load the page again from itself rather than replace the browser's id.
    if (req.headers['sec-fetch-site'] === 'cross-site') {
      sendText(res, 200, HTML, bouncePage(url.pathname));
      return;
    }
    const fresh = ctx.guard.newUid(caller);
    uid = fresh.uid;
    headers['set-cookie'] = fresh.cookies;
  }
  sendText(res, 200, HTML, pageWithToken(ctx.guard.pageToken(uid), ctx.opts.facts), headers);
}

export function serveFavicon(ctx: RoutesContext, req: IncomingMessage, res: ServerResponse): void {
  const admitted = ctx.guard.admit(req);
  if ('refused' in admitted && admitted.refused !== 'unauthenticated') return refuse(ctx, req, res, admitted.refused);
  sendText(res, 200, 'image/svg+xml', FAVICON_SVG, { 'cache-control': 'public, max-age=86400' });
}
