// OpenAI Responses: `POST /v1/responses`, `GET /v1/responses/{id}` and its `/input_items`. The
// emulator keeps each conversation as the seed's forms do (state.ts), known by every response id
// it made: `previous_response_id` continues it, and an unknown or expired one is answered 404
// `previous_response_not_found`. Replies follow the same rules as the other forms (replies.ts).
import { randomBytes } from 'node:crypto';
import type { ChatCall, EmulatorContext } from './context.js';
import { isRecord, sendJson } from './http.js';
import { failOpenAi, knownModel, lastUserText, sendOpenAiError, streamOpenAiTurn } from './openai-http.js';
import type { Conversation } from './state.js';
import type { StreamWriter } from './stream-writers.js';
import { prepareTurn, sendFaults } from './turn.js';
import type { StoredMessage } from './types.js';
import { protocolParts } from './protocol-writers.js';

const hex = () => randomBytes(8).toString('hex');

/** The response object as OpenAI returns it (and repeats in `response.created`/`.completed`). */
function responseObject(id: string, model: string, created: number, status: string, text: string | undefined) {
  const output =
    text === undefined
      ? []
      : [
          {
            id: `msg_${id.slice(5)}`,
            type: 'message',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text, annotations: [] }],
          },
        ];
  return { id, object: 'response', created_at: created, status, model, output };
}

/** The typed SSE events of a streamed response, `sequence_number` counting them. */
export function responsesWriter(id: string, model: string, created: number, text: string): StreamWriter {
  let seq = 0;
  const itemId = `msg_${id.slice(5)}`;
  const ev = (type: string, fields: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`;
  const at = { item_id: itemId, output_index: 0, content_index: 0 };
  const item = (status: string, content: unknown[]) => ({
    id: itemId,
    type: 'message',
    status,
    role: 'assistant',
    content,
  });
  const parts = protocolParts('responses');
  return {
    contentType: 'text/event-stream; charset=utf-8',
    start: () =>
      ev('response.created', { response: responseObject(id, model, created, 'in_progress', undefined) }) +
      ev('response.output_item.added', { output_index: 0, item: item('in_progress', []) }) +
      ev('response.content_part.added', { ...at, part: { type: 'output_text', text: '', annotations: [] } }),
    delta: (delta) => ev('response.output_text.delta', { ...at, delta }),
    part: (p) => (p.kind === 'text' ? ev('response.output_text.delta', { ...at, delta: p.text }) : parts(p)),
    done: () =>
      ev('response.output_text.done', { ...at, text }) +
      ev('response.content_part.done', { ...at, part: { type: 'output_text', text, annotations: [] } }) +
      ev('response.output_item.done', {
        output_index: 0,
        item: item('completed', [{ type: 'output_text', text, annotations: [] }]),
      }) +
      ev('response.completed', { response: responseObject(id, model, created, 'completed', text) }),
    error: (message) => ev('error', { code: 'server_error', message, param: null }),
  };
}

export async function handleResponses(
  ctx: EmulatorContext,
  call: ChatCall,
  route: { responseId?: string; inputItems?: boolean },
): Promise<void> {
  if (route.responseId !== undefined) return read(ctx, call, route.responseId, route.inputItems === true);
  const body = call.body;
  if (!isRecord(body)) return sendOpenAiError(call, 400, 'invalid_request', 'the body must be a JSON object');
  if (!knownModel(ctx, call, body.model)) return;
  const model = body.model as string;
  const text =
    typeof body.input === 'string' ? body.input : Array.isArray(body.input) ? lastUserText(body.input) : undefined;
  if (text === undefined)
    return sendOpenAiError(call, 400, 'invalid_request', '`input` must be text or end with a user message', {
      param: 'input',
    });
  call.record.message = text;
  const previous = body.previous_response_id;
  if (previous !== undefined && previous !== null && typeof previous !== 'string')
    return sendOpenAiError(call, 400, 'invalid_request', '`previous_response_id` must be a string', {
      param: 'previous_response_id',
    });
  const found = typeof previous === 'string' ? ctx.store.lookup('responses', previous) : undefined;
  if (found !== undefined && found.kind !== 'ok') return previousGone(call, previous as string);
  const turn = prepareTurn(ctx, 'responses', call.endpoint, model, { message: text });
  if (!turn.ok) return failOpenAi(call, turn.error);

  const id = `resp_${hex()}`;
  const created = Math.floor(ctx.now() / 1000);
  const open = (): Conversation => {
    const conv = found?.kind === 'ok' ? found.conv : ctx.store.create('responses', model, id);
    ctx.store.alias(conv, id);
    ctx.store.addMessage(conv, 'user', text);
    return conv;
  };
  // The assistant message carries the response's id: GET /v1/responses/{id} finds it by that.
  const answered = (conv: Conversation) => {
    ctx.store.addMessage(conv, 'assistant', turn.text).id = id;
  };

  if (call.endpoint === 'send') {
    const faulted = await sendFaults(ctx, call.req, call.res, turn);
    if (faulted === 'handled') return;
    if (faulted) return failOpenAi(call, faulted);
    answered(open());
    return sendJson(call.res, 200, responseObject(id, model, created, 'completed', turn.text), {}, call.record);
  }
  const conv = open();
  const writer = responsesWriter(id, model, created, turn.text);
  await streamOpenAiTurn(ctx, call, turn, writer, () => answered(conv));
}

function previousGone(call: ChatCall, id: string): void {
  sendOpenAiError(call, 404, 'previous_response_not_found', `Previous response with id '${id}' not found.`, {
    param: 'previous_response_id',
  });
}

/** `GET /v1/responses/{id}` (the response) or `…/input_items` (the conversation before its answer). */
function read(ctx: EmulatorContext, call: ChatCall, id: string, inputItems: boolean): void {
  const found = ctx.store.lookup('responses', id);
  if (found.kind !== 'ok')
    return sendOpenAiError(call, 404, 'not_found', `Response with id '${id}' not found.`, { param: 'response_id' });
  const conv = found.conv;
  const at = conv.messages.findIndex((m) => m.role === 'assistant' && m.id === id);
  const created = Math.floor(conv.createdAt / 1000);
  if (!inputItems) {
    const answer = at === -1 ? undefined : conv.messages[at]?.content;
    const status = answer === undefined ? 'incomplete' : 'completed';
    return sendJson(call.res, 200, responseObject(id, conv.botId, created, status, answer), {}, call.record);
  }
  const q = call.url.searchParams;
  const limit = Math.min(100, Math.max(1, Number(q.get('limit') ?? '20') || 20));
  const before = at === -1 ? conv.messages : conv.messages.slice(0, at);
  const ordered = q.get('order') === 'asc' ? before : [...before].reverse();
  const data = ordered.slice(0, limit).map(item);
  sendJson(call.res, 200, { object: 'list', data, has_more: ordered.length > limit }, {}, call.record);
}

function item(m: StoredMessage) {
  const type = m.role === 'user' ? 'input_text' : 'output_text';
  return { id: m.id, type: 'message', role: m.role, content: [{ type, text: m.content }] };
}
