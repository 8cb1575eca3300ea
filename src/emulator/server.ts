// The node:http server: auth, routing to Form A / Form B / admin paths, connection tracking.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { ChatCall, EmulatorContext } from './context.js';
import { handleAdmin } from './admin.js';
import { handleFormA } from './form-a.js';
import { handleFormB } from './form-b.js';
import { bearerOk, headersWithoutAuth, isRecord, readJsonBody, sendJson } from './http.js';
import { type EmulatorAccess, hostAllowed } from './options.js';
import { handleOpenAi, matchOpenAiRoute, servesOpenAi } from './openai-routes.js';
import type { ChatEndpoint, RecordedRequest } from './types.js';

interface Route {
  form: 'a' | 'b';
  endpoint: ChatEndpoint;
  method: 'GET' | 'POST';
  botId?: string;
  conversationId?: string;
}

const A_PREFIX = '/api/v1/chat/';
const B_PREFIX = '/v1/chat/';
const B_ROUTES: Record<string, { endpoint: ChatEndpoint; method: 'GET' | 'POST' }> = {
  send: { endpoint: 'send', method: 'POST' },
  stream: { endpoint: 'stream', method: 'POST' },
  history: { endpoint: 'history', method: 'GET' },
  conversations: { endpoint: 'list', method: 'GET' },
};

function decode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

export function matchRoute(pathname: string): Route | undefined {
  if (pathname.startsWith(A_PREFIX)) {
    const parts = pathname.slice(A_PREFIX.length).split('/');
    const botId = decode(parts[0] ?? '');
    if (!botId) return undefined;
    const [, action, id, ...extra] = parts;
    if (extra.length > 0) return undefined;
    if (action === 'message' && id === undefined) return { form: 'a', endpoint: 'send', method: 'POST', botId };
    if (action === 'stream' && id === undefined) return { form: 'a', endpoint: 'stream', method: 'POST', botId };
    if (action === 'conversations') {
      if (id === undefined || id === '') return { form: 'a', endpoint: 'list', method: 'GET', botId };
      const conversationId = decode(id);
      if (conversationId) return { form: 'a', endpoint: 'history', method: 'GET', botId, conversationId };
    }
    return undefined;
  }
  if (pathname.startsWith(B_PREFIX)) {
    const r = B_ROUTES[pathname.slice(B_PREFIX.length).replace(/\/$/, '')];
    return r ? { form: 'b', ...r } : undefined;
  }
  return undefined;
}

function notFound(res: ServerResponse, formB: boolean): void {
  if (formB) sendJson(res, 404, { error: { code: 'NOT_FOUND', message: 'No such endpoint' } });
  else sendJson(res, 404, { success: false, error: 'Not found' });
}

function notServed(res: ServerResponse, form: string): void {
  const message =
    `This emulator serves --form ${form}; start it with --form all (every form), ` +
    '--form chat-completions or --form responses for OpenAI-compatible clients';
  sendJson(res, 404, { error: { message, type: 'invalid_request_error', param: null, code: 'form_not_served' } });
}

function unauthorized(res: ServerResponse, formB: boolean, record?: RecordedRequest): void {
  const msg = 'Invalid or missing API key';
  const headers = { 'www-authenticate': 'Bearer' };
  if (formB) sendJson(res, 401, { error: { code: 'UNAUTHORIZED', message: msg } }, headers, record);
  else sendJson(res, 401, { success: false, error: msg }, headers, record);
}

/** A Host that is not one of the emulator's names (DNS rebinding): nothing else is looked at. */
function badHost(res: ServerResponse, formB: boolean): void {
  const message = 'This Host is not one of the emulator’s names';
  if (formB) sendJson(res, 403, { error: { code: 'FORBIDDEN', message } }, { connection: 'close' });
  else sendJson(res, 403, { success: false, error: message }, { connection: 'close' });
}

async function handle(
  ctx: EmulatorContext,
  access: Required<EmulatorAccess>,
  boundHost: string,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const form = ctx.opts.form;
  const url = new URL(req.url ?? '/', 'http://emulator.local');
  const formBShape = url.pathname.startsWith('/v1/');
  if (!hostAllowed(req.headers.host, boundHost)) {
    req.resume();
    return badHost(res, formBShape);
  }
  const openAi = matchOpenAiRoute(url.pathname);
  if (openAi !== undefined && servesOpenAi(form, openAi)) return handleOpenAi(ctx, req, res, url, openAi);
  const route = matchRoute(url.pathname);
  const served = route !== undefined && (form === 'both' || form === 'all' || form === route.form);

  if (!served) {
    req.resume();
    if (!bearerOk(req, ctx.opts.apiKey)) return unauthorized(res, formBShape);
    // Off unless asked for (`--admin`): the request log holds every message the emulator received.
    if (url.pathname.startsWith('/_emulator/') && access.admin) return handleAdmin(ctx, req, res, url);
    // An OpenAI path on an emulator started for other forms (the default `both`): say which flag serves it.
    if (openAi !== undefined) return notServed(res, form);
    return notFound(res, formBShape);
  }

  const record: RecordedRequest = {
    form: route.form,
    endpoint: route.endpoint,
    method: req.method ?? 'GET',
    path: url.pathname + url.search,
    botId: route.form === 'a' ? route.botId : (url.searchParams.get('bot_id') ?? undefined),
    message: undefined,
    conversationId: route.form === 'a' ? route.conversationId : (url.searchParams.get('session_id') ?? undefined),
    metadata: undefined,
    body: undefined,
    query: Object.fromEntries(url.searchParams),
    headers: headersWithoutAuth(req),
    at: ctx.now(),
  };
  if (route.form === 'b' && record.conversationId !== undefined) record.session_id = record.conversationId;
  ctx.requests.push(record);
  const over = ctx.requests.length - ctx.opts.maxRecordedRequests;
  if (over > 0) ctx.requests.splice(0, over);

  let body: unknown;
  if (req.method === 'POST') {
    const parsed = await readJsonBody(req);
    if (parsed.ok) {
      body = parsed.value;
      record.body = body;
      if (isRecord(body)) {
        if (typeof body.message === 'string') record.message = body.message;
        record.metadata = body.metadata;
        const id = route.form === 'a' ? body.conversationId : body.session_id;
        if (typeof id === 'string') record.conversationId = id;
        if (route.form === 'b') {
          if (typeof body.bot_id === 'string') record.botId = body.bot_id;
          if (typeof id === 'string') record.session_id = id;
        }
      }
    } else {
      if (!bearerOk(req, ctx.opts.apiKey)) return unauthorized(res, route.form === 'b', record);
      return sendBadBody(res, route.form, parsed.status, parsed.reason, record);
    }
  } else {
    req.resume();
  }

  if (!bearerOk(req, ctx.opts.apiKey)) return unauthorized(res, route.form === 'b', record);
  if (req.method !== route.method) {
    record.status = 405;
    return sendJson(res, 405, methodBody(route.form), { allow: route.method }, record);
  }

  const call: ChatCall = { req, res, url, endpoint: route.endpoint, record, body };
  if (route.botId !== undefined) call.pathBotId = route.botId;
  if (route.conversationId !== undefined) call.pathConversationId = route.conversationId;
  if (route.form === 'a') await handleFormA(ctx, call);
  else await handleFormB(ctx, call);
}

function methodBody(form: 'a' | 'b'): unknown {
  return form === 'b'
    ? { error: { code: 'METHOD_NOT_ALLOWED', message: 'Method not allowed' } }
    : { success: false, error: 'Method not allowed' };
}

function sendBadBody(res: ServerResponse, form: 'a' | 'b', status: number, reason: string, record: RecordedRequest) {
  if (form === 'b') {
    const code = status === 413 ? 'PAYLOAD_TOO_LARGE' : 'INVALID_REQUEST';
    sendJson(res, status, { error: { code, message: reason } }, {}, record);
  } else {
    sendJson(res, status, { success: false, error: reason }, {}, record);
  }
}

/** The server of `ctx`, bound (by the caller) to `boundHost`: see EmulatorAccess for who it answers. */
export function createEmulatorServer(
  ctx: EmulatorContext,
  access: EmulatorAccess = {},
  boundHost = '127.0.0.1',
): Server {
  const granted: Required<EmulatorAccess> = { admin: access.admin === true };
  const server = createServer((req, res) => {
    handle(ctx, granted, boundHost, req, res).catch((err: unknown) => {
      // A handler bug must not take the emulator down; answer 500 when still possible.
      if (!res.headersSent && !res.destroyed) {
        sendJson(res, 500, { success: false, error: `emulator error: ${String(err)}` });
      } else {
        res.destroy();
      }
    });
  });
  return server;
}
