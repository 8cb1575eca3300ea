// The emulator's OpenAI-compatible routes under `/v1` (Chat Completions, Responses, the model
// list): which an emulator serves, bearer-key auth, the request log entry, then the form's handler.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChatCall, EmulatorContext } from './context.js';
import { handleChatCompletions } from './form-chat-completions.js';
import { handleResponses } from './form-responses.js';
import { bearerOk, headersWithoutAuth, isRecord, readJsonBody, sendJson } from './http.js';
import { type OpenAiForm, sendOpenAiError } from './openai-http.js';
import type { ApiForm, ChatEndpoint, EmulatorForm, RecordedRequest } from './types.js';

export interface OpenAiRoute {
  form: OpenAiForm | 'models';
  method: 'GET' | 'POST';
  /** Responses: `GET /v1/responses/{id}` and `/v1/responses/{id}/input_items`. */
  responseId?: string;
  inputItems?: boolean;
}

export function matchOpenAiRoute(pathname: string): OpenAiRoute | undefined {
  const path = pathname.replace(/\/+$/, '');
  if (path === '/v1/models') return { form: 'models', method: 'GET' };
  if (path === '/v1/chat/completions') return { form: 'chat-completions', method: 'POST' };
  if (path === '/v1/responses') return { form: 'responses', method: 'POST' };
  const m = /^\/v1\/responses\/([^/]+)(\/input_items)?$/.exec(path);
  if (m?.[1] === undefined) return undefined;
  let id: string;
  try {
    id = decodeURIComponent(m[1]);
  } catch {
    return undefined;
  }
  return { form: 'responses', method: 'GET', responseId: id, inputItems: m[2] !== undefined };
}

/** Whether an emulator running `form` serves this route. */
export function servesOpenAi(form: EmulatorForm, route: OpenAiRoute): boolean {
  if (form === 'all') return true;
  return route.form === 'models' ? form === 'chat-completions' || form === 'responses' : form === route.form;
}

export async function handleOpenAi(
  ctx: EmulatorContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  route: OpenAiRoute,
): Promise<void> {
  const form: ApiForm = route.form === 'models' ? 'chat-completions' : route.form;
  let body: unknown;
  let bad: string | undefined;
  if (req.method === 'POST') {
    const parsed = await readJsonBody(req);
    if (parsed.ok) body = parsed.value;
    else bad = parsed.reason;
  } else {
    req.resume();
  }
  const stream = isRecord(body) && body.stream === true;
  const endpoint: ChatEndpoint =
    route.method === 'GET' ? (route.form === 'models' ? 'list' : 'history') : stream ? 'stream' : 'send';
  const record: RecordedRequest = {
    form,
    endpoint,
    method: req.method ?? 'GET',
    path: url.pathname + url.search,
    botId: isRecord(body) && typeof body.model === 'string' ? body.model : undefined,
    message: undefined,
    conversationId:
      isRecord(body) && typeof body.previous_response_id === 'string' ? body.previous_response_id : route.responseId,
    metadata: undefined,
    body,
    query: Object.fromEntries(url.searchParams),
    headers: headersWithoutAuth(req),
    at: ctx.now(),
  };
  if (route.form !== 'models') {
    ctx.requests.push(record);
    const over = ctx.requests.length - ctx.opts.maxRecordedRequests;
    if (over > 0) ctx.requests.splice(0, over);
  }
  const call: ChatCall = { req, res, url, endpoint, record, body };
  if (!bearerOk(req, ctx.opts.apiKey)) {
    return sendOpenAiError(call, 401, 'invalid_api_key', 'Incorrect API key provided.', {
      headers: { 'www-authenticate': 'Bearer' },
    });
  }
  if (req.method !== route.method) {
    return sendJson(
      res,
      405,
      { error: { message: 'Method not allowed', type: 'invalid_request_error' } },
      { allow: route.method },
      record,
    );
  }
  if (bad !== undefined) return sendOpenAiError(call, 400, 'invalid_json', bad);
  if (route.form === 'models') return models(ctx, res);
  if (route.form === 'chat-completions') return handleChatCompletions(ctx, call);
  return handleResponses(ctx, call, route);
}

/** `GET /v1/models`: every known bot, as OpenAI lists models. */
function models(ctx: EmulatorContext, res: ServerResponse): void {
  const created = Math.floor(ctx.now() / 1000);
  const data = ctx.opts.bots.map((id) => ({ id, object: 'model', created, owned_by: 'assistant-bridge-emulator' }));
  sendJson(res, 200, { object: 'list', data });
}
