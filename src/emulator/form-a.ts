// Form A: /api/v1/chat/{botId}/(message|stream|conversations|conversations/{id}).
import type { ChatCall, EmulatorContext } from './context.js';
import { isRecord, sendJson } from './http.js';
import { type Conversation, newConversationId } from './state.js';
import { answerTurn, type ErrorSpec, errorSpec, prepareTurn, streamTurn } from './turn.js';

function fail(call: ChatCall, err: ErrorSpec): void {
  sendJson(call.res, err.status, { success: false, error: err.message }, err.headers, call.record);
}

const failWith = (call: ChatCall, status: number, message: string) =>
  sendJson(call.res, status, { success: false, error: message }, {}, call.record);

export async function handleFormA(ctx: EmulatorContext, call: ChatCall): Promise<void> {
  const botId = call.pathBotId ?? '';
  if (!ctx.opts.bots.includes(botId)) return failWith(call, 404, `Bot not found: ${botId}`);
  switch (call.endpoint) {
    case 'send':
    case 'stream':
      return turnA(ctx, call, botId);
    case 'history':
    case 'list': {
      const fault = ctx.faults.take('a', call.endpoint, botId);
      if (fault?.status !== undefined)
        return fail(call, errorSpec(fault.status, fault.code, fault.message, fault.retryAfterSeconds));
      return call.endpoint === 'history' ? historyA(ctx, call, botId) : listA(ctx, call, botId);
    }
  }
}

async function turnA(ctx: EmulatorContext, call: ChatCall, botId: string): Promise<void> {
  if (!isRecord(call.body)) return failWith(call, 400, 'request body must be a JSON object');
  const body = call.body;
  const turn = prepareTurn(ctx, 'a', call.endpoint, botId, body);
  if (!turn.ok) return fail(call, turn.error);
  const given = body.conversationId;
  if (given !== undefined && given !== null && (typeof given !== 'string' || given === '')) {
    return failWith(call, 400, 'conversationId must be a non-empty string');
  }
  let existing: Conversation | undefined;
  if (typeof given === 'string') {
    const found = ctx.store.lookup('a', given);
    if (found.kind !== 'ok' || found.conv.botId !== botId) {
      return failWith(call, 404, `Conversation not found: ${given}`);
    }
    existing = found.conv;
  }

  const open = () => existing ?? ctx.store.create('a', botId, newConversationId());
  if (call.endpoint === 'send') {
    const done = await answerTurn(ctx, call, turn, open);
    if (done === 'handled') return;
    if (!('conv' in done)) return fail(call, done);
    const data = { response: turn.text, conversationId: done.conv.id, messageId: done.replyId };
    return sendJson(call.res, 200, { success: true, data }, {}, call.record);
  }

  const conv = open();
  const ids = ctx.opts.streamIds;
  const inHeader = ids === 'header' || ids === 'both';
  const inEvent = ids === 'event' || ids === 'both';
  const shown = inEvent ? { conversationId: conv.id } : {};
  await streamTurn(ctx, call, turn, conv, {
    headers: inHeader ? { 'x-conversation-id': conv.id } : {},
    startIds: shown,
    doneIds: shown,
  });
}

function historyA(ctx: EmulatorContext, call: ChatCall, botId: string) {
  const id = call.pathConversationId ?? '';
  const found = ctx.store.lookup('a', id);
  if (found.kind !== 'ok' || found.conv.botId !== botId) return failWith(call, 404, `Conversation not found: ${id}`);
  const { conv } = found;
  sendJson(
    call.res,
    200,
    {
      success: true,
      data: {
        conversationId: conv.id,
        messages: conv.messages.map(({ id: mid, role, content, timestamp }) => ({ id: mid, role, content, timestamp })),
        metadata: { createdAt: new Date(conv.createdAt).toISOString(), messageCount: conv.messages.length },
      },
    },
    {},
    call.record,
  );
}

function listA(ctx: EmulatorContext, call: ChatCall, botId: string) {
  const q = call.url.searchParams;
  const page = intParam(q.get('page'), 1);
  const limit = intParam(q.get('limit'), 20);
  if (page === undefined || page < 1) return failWith(call, 400, 'page must be a positive integer');
  if (limit === undefined || limit < 1) return failWith(call, 400, 'limit must be a positive integer');
  const sinceRaw = q.get('since');
  let since: number | undefined;
  if (sinceRaw !== null && sinceRaw !== '') {
    since = Date.parse(sinceRaw);
    if (Number.isNaN(since)) return failWith(call, 400, 'since must be an ISO date');
  }
  const data = ctx.store.listA(botId, page, Math.min(limit, 100), since);
  sendJson(call.res, 200, { success: true, data }, {}, call.record);
}

/** A query integer: the default when absent, undefined when malformed. */
export function intParam(raw: string | null, dflt: number): number | undefined {
  if (raw === null || raw === '') return dflt;
  if (!/^\d{1,9}$/.test(raw)) return undefined;
  return Number(raw);
}
