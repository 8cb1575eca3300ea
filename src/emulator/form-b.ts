// Form B: /v1/chat/(send|stream|history|conversations).
import type { ChatCall, EmulatorContext } from './context.js';
import { intParam } from './form-a.js';
import { isRecord, sendJson } from './http.js';
import { historyWindow, newSessionId } from './state.js';
import { answerTurn, type ErrorSpec, errorSpec, prepareTurn, streamTurn } from './turn.js';

const MAX_HISTORY_LIMIT = 1000;

function fail(call: ChatCall, err: ErrorSpec): void {
  sendJson(call.res, err.status, { error: { code: err.code, message: err.message } }, err.headers, call.record);
}

const failWith = (call: ChatCall, status: number, code: string, message: string) =>
  fail(call, errorSpec(status, code, message));

function knownBot(ctx: EmulatorContext, call: ChatCall, botId: unknown): botId is string {
  if (typeof botId === 'string' && ctx.opts.bots.includes(botId)) return true;
  failWith(call, 400, 'INVALID_BOT_ID', `Unknown bot_id: ${typeof botId === 'string' ? botId : '(missing)'}`);
  return false;
}

export async function handleFormB(ctx: EmulatorContext, call: ChatCall): Promise<void> {
  switch (call.endpoint) {
    case 'send':
    case 'stream':
      return turnB(ctx, call);
    case 'history':
    case 'list': {
      const fault = ctx.faults.take('b', call.endpoint, call.record.botId);
      if (fault?.status !== undefined)
        return fail(call, errorSpec(fault.status, fault.code, fault.message, fault.retryAfterSeconds));
      return call.endpoint === 'history' ? historyB(ctx, call) : listB(ctx, call);
    }
  }
}

async function turnB(ctx: EmulatorContext, call: ChatCall): Promise<void> {
  if (!isRecord(call.body)) return failWith(call, 400, 'INVALID_REQUEST', 'request body must be a JSON object');
  const body = call.body;
  if (!knownBot(ctx, call, body.bot_id)) return;
  const botId = body.bot_id as string;
  const turn = prepareTurn(ctx, 'b', call.endpoint, botId, body);
  if (!turn.ok) return fail(call, turn.error);
  const given = body.session_id;
  if (given !== undefined && given !== null && (typeof given !== 'string' || given === '')) {
    return failWith(call, 400, 'INVALID_REQUEST', 'session_id must be a non-empty string');
  }
  const sessionId = typeof given === 'string' ? given : newSessionId();
  const found = ctx.store.lookup('b', sessionId);
  if (found.kind === 'expired') {
    return failWith(call, 410, 'SESSION_EXPIRED', `Session expired: ${sessionId}`);
  }
  // An unknown session id starts a session with that id (clients may choose their own ids).
  const session = () => (found.kind === 'ok' ? found.conv : ctx.store.create('b', botId, sessionId));

  if (call.endpoint === 'send') {
    const done = await answerTurn(ctx, call, turn, session);
    if (done === 'handled') return;
    if (!('conv' in done)) return fail(call, done);
    const body = { response: turn.text, session_id: done.conv.id, message_id: done.replyId };
    return sendJson(call.res, 200, body, {}, call.record);
  }

  const conv = session();
  await streamTurn(ctx, call, turn, conv, {
    headers: { 'x-session-id': conv.id },
    startIds: { sessionId: conv.id },
    doneIds: { sessionId: conv.id },
  });
}

function historyB(ctx: EmulatorContext, call: ChatCall) {
  const q = call.url.searchParams;
  const sessionId = q.get('session_id');
  if (!sessionId) return failWith(call, 400, 'INVALID_REQUEST', 'session_id is required');
  const limit = intParam(q.get('limit'), 50);
  if (limit === undefined || limit < 1)
    return failWith(call, 400, 'INVALID_REQUEST', 'limit must be a positive integer');
  const found = ctx.store.lookup('b', sessionId);
  if (found.kind === 'expired') return failWith(call, 410, 'SESSION_EXPIRED', `Session expired: ${sessionId}`);
  if (found.kind === 'unknown') return failWith(call, 404, 'SESSION_NOT_FOUND', `Session not found: ${sessionId}`);
  const win = historyWindow(
    found.conv.messages,
    Math.min(limit, MAX_HISTORY_LIMIT),
    q.get('before') ?? undefined,
    q.get('after') ?? undefined,
  );
  if (!win.ok) return failWith(call, 400, 'INVALID_REQUEST', win.reason);
  sendJson(
    call.res,
    200,
    {
      session_id: sessionId,
      messages: win.messages.map(({ id, role, content, timestamp }) => ({ id, role, content, timestamp })),
      has_more: win.hasMore,
    },
    {},
    call.record,
  );
}

function listB(ctx: EmulatorContext, call: ChatCall) {
  const q = call.url.searchParams;
  const botId = q.get('bot_id');
  if (botId !== null && !knownBot(ctx, call, botId)) return;
  const limit = intParam(q.get('limit'), 20);
  if (limit === undefined || limit < 1)
    return failWith(call, 400, 'INVALID_REQUEST', 'limit must be a positive integer');
  sendJson(call.res, 200, ctx.store.listB(botId ?? undefined, Math.min(limit, 100)), {}, call.record);
}
