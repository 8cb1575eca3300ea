// What the emulator's OpenAI-compatible forms share: OpenAI's error body, the model check, and
// the user's text of a request (the last user message), so replies follow the same rules as the
// seed's forms (replies.ts).
import type { ServerResponse } from 'node:http';
import type { ChatCall, EmulatorContext } from './context.js';
import { isRecord, sendJson } from './http.js';
import { agentReplyParts } from './agent-replies.js';
import { runStream } from './stream.js';
import type { StreamWriter } from './stream-writers.js';
import type { ErrorSpec, OkTurn } from './turn.js';
import type { ApiForm, RecordedRequest } from './types.js';

export type OpenAiForm = Extract<ApiForm, 'chat-completions' | 'responses'>;

const OPENAI_CODES: Record<string, string> = {
  RATE_LIMITED: 'rate_limit_exceeded',
  BOT_ERROR: 'server_error',
  MESSAGE_TOO_LONG: 'context_length_exceeded',
  INVALID_REQUEST: 'invalid_request',
  UNAUTHORIZED: 'invalid_api_key',
};

/** OpenAI's error body: `{error: {message, type, param, code}}`. */
export function sendOpenAiError(
  call: { res: ServerResponse; record?: RecordedRequest },
  status: number,
  code: string,
  message: string,
  extra: { param?: string; headers?: Record<string, string> } = {},
): void {
  const type = status >= 500 ? 'server_error' : status === 429 ? 'rate_limit_error' : 'invalid_request_error';
  const body = { error: { message, type, param: extra.param ?? null, code } };
  sendJson(call.res, status, body, extra.headers ?? {}, call.record);
}

/** An error of the shared turn rules (faults, directives, validation) in OpenAI's shape. */
export function failOpenAi(call: ChatCall, err: ErrorSpec): void {
  sendOpenAiError(call, err.status, OPENAI_CODES[err.code] ?? err.code.toLowerCase(), err.message, {
    headers: err.headers,
  });
}

/** A model the emulator does not know: 404 `model_not_found`, as OpenAI answers. */
export function knownModel(ctx: EmulatorContext, call: ChatCall, model: unknown): model is string {
  if (typeof model === 'string' && ctx.opts.bots.includes(model)) return true;
  const name = typeof model === 'string' ? model : '(missing)';
  sendOpenAiError(
    call,
    404,
    'model_not_found',
    `The model \`${name}\` does not exist or you do not have access to it.`,
    {
      param: 'model',
    },
  );
  return false;
}

/** A message's text: a string, or its text parts joined. */
export function partsText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.filter(isRecord).map((p) => (typeof p.text === 'string' ? p.text : undefined));
  return texts.every((t) => t !== undefined) && texts.length > 0 ? texts.join('') : undefined;
}

/** The text of the last user message of a message list, or undefined. */
export function lastUserText(messages: unknown[]): string | undefined {
  const last = messages.filter(isRecord).at(-1);
  return last?.role === 'user' ? partsText(last.content) : undefined;
}

/**
 * A turn's stream in an OpenAI form: the writer frames the text, and `[steps]`, `[sources]`,
 * `[agent]`… add the agent's work in the form's own events (tool calls, reasoning, citations), as
 * a real server streams them, the text between them.
 */
export async function streamOpenAiTurn(
  ctx: EmulatorContext,
  call: ChatCall,
  turn: OkTurn,
  writer: StreamWriter,
  onComplete: () => void,
): Promise<void> {
  call.record.status = 200;
  const agent = turn.directives.agent;
  await runStream(
    call.req,
    call.res,
    {
      writer,
      bytes: false,
      headers: { 'content-type': writer.contentType },
      startIds: {},
      doneIds: {},
      text: turn.text,
      frames:
        agent !== undefined
          ? agentReplyParts(turn.text, turn.directives.chunks, agent).map((p) => writer.part(p))
          : undefined,
      pieces: turn.directives.chunks,
      delayMs: turn.directives.delay ?? ctx.opts.chunkDelayMs,
      splitWrites: ctx.opts.splitWrites,
      ...turn.faults,
      onComplete,
    },
    ctx.closing,
    ctx.live,
  );
}
