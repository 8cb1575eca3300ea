// OpenAI Chat Completions: `POST /v1/chat/completions`. Stateless, as the real ones are: the reply
// answers the last user message (the same reply rules as the seed's forms), and the request log
// keeps the whole `messages` list, so a test sees what the client sent of the conversation.
import { randomBytes } from 'node:crypto';
import type { ChatCall, EmulatorContext } from './context.js';
import { isRecord, sendJson } from './http.js';
import { failOpenAi, knownModel, lastUserText, sendOpenAiError, streamOpenAiTurn } from './openai-http.js';
import type { StreamWriter } from './stream-writers.js';
import { prepareTurn, sendFaults } from './turn.js';
import { protocolParts } from './protocol-writers.js';

const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;

/** `chat.completion.chunk` events: the role, content deltas, the finish reason, then `[DONE]`. */
export function chunkWriter(id: string, model: string, created: number): StreamWriter {
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const parts = protocolParts('chat-completions');
  return {
    contentType: 'text/event-stream; charset=utf-8',
    start: () => sse(chunk({ role: 'assistant', content: '' }, null)),
    delta: (text) => sse(chunk({ content: text }, null)),
    part: (p) => (p.kind === 'text' ? sse(chunk({ content: p.text }, null)) : parts(p)),
    done: () => `${sse(chunk({}, 'stop'))}data: [DONE]\n\n`,
    error: (message) => sse({ error: { message, type: 'server_error', param: null, code: 'server_error' } }),
  };
}

export async function handleChatCompletions(ctx: EmulatorContext, call: ChatCall): Promise<void> {
  const body = call.body;
  if (!isRecord(body)) return sendOpenAiError(call, 400, 'invalid_request', 'the body must be a JSON object');
  if (!knownModel(ctx, call, body.model)) return;
  const model = body.model as string;
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return sendOpenAiError(call, 400, 'invalid_request', '`messages` must be a non-empty list', { param: 'messages' });
  const text = lastUserText(body.messages);
  if (text === undefined)
    return sendOpenAiError(call, 400, 'invalid_request', 'the last message must be a user message with text', {
      param: 'messages',
    });
  call.record.message = text;
  const turn = prepareTurn(ctx, 'chat-completions', call.endpoint, model, { message: text });
  if (!turn.ok) return failOpenAi(call, turn.error);
  const id = `chatcmpl-${randomBytes(8).toString('hex')}`;
  const created = Math.floor(ctx.now() / 1000);

  if (call.endpoint === 'send') {
    const faulted = await sendFaults(ctx, call.req, call.res, turn);
    if (faulted === 'handled') return;
    if (faulted) return failOpenAi(call, faulted);
    return sendJson(
      call.res,
      200,
      {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: turn.text }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      },
      {},
      call.record,
    );
  }
  const writer = chunkWriter(id, model, created);
  await streamOpenAiTurn(ctx, call, turn, writer, () => {});
}
