// The steps send and stream share in both forms: validation, faults, directives, the reply.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmulatorContext } from './context.js';
import { isRecord, pause, whenAborted } from './http.js';
import { codeForStatus, messageForStatus } from './faults.js';
import { type Directives, parseDirectives, replyText } from './replies.js';
import type { ChatCall } from './context.js';
import type { Conversation } from './state.js';
import { agentReplyParts } from './agent-replies.js';
import { protocolWriter } from './protocol-writers.js';
import { runStream, type StreamFaults } from './stream.js';
import { type FrameIds, writerFor } from './stream-writers.js';
import type { ApiForm, ChatEndpoint, Fault } from './types.js';

export interface ErrorSpec {
  status: number;
  /** Form B code. */
  code: string;
  message: string;
  headers: Record<string, string>;
}

export function errorSpec(status: number, code?: string, message?: string, retryAfter?: number): ErrorSpec {
  const headers: Record<string, string> = {};
  const ra = retryAfter ?? (status === 429 ? 1 : undefined);
  if (ra !== undefined) headers['retry-after'] = String(ra);
  return { status, code: code ?? codeForStatus(status), message: message ?? messageForStatus(status), headers };
}

export type OkTurn = Extract<Turn, { ok: true }>;

export type Turn =
  | { ok: false; error: ErrorSpec }
  | {
      ok: true;
      message: string;
      metadata: unknown;
      directives: Directives;
      text: string;
      /** Stream faults from an injected fault or directives (the fault wins). */
      faults: StreamFaults;
    };

/**
 * Validates the message and applies injected faults and the `[status S]` directive. Runs after
 * the bot was found and before any conversation is touched.
 */
export function prepareTurn(
  ctx: EmulatorContext,
  form: ApiForm,
  endpoint: ChatEndpoint,
  botId: string,
  body: Record<string, unknown>,
): Turn {
  const fault: Fault | undefined = ctx.faults.take(form, endpoint, botId);
  if (fault?.status !== undefined) {
    return { ok: false, error: errorSpec(fault.status, fault.code, fault.message, fault.retryAfterSeconds) };
  }
  const message = body.message;
  if (typeof message !== 'string' || message.trim() === '') {
    return { ok: false, error: errorSpec(400, 'INVALID_REQUEST', 'message is required (a non-empty string)') };
  }
  if (message.length > ctx.opts.maxMessageChars) {
    const text = `message is too long: ${message.length} characters, the limit is ${ctx.opts.maxMessageChars}`;
    return { ok: false, error: errorSpec(400, 'MESSAGE_TOO_LONG', text) };
  }
  if (body.metadata !== undefined && body.metadata !== null && !isRecord(body.metadata)) {
    return { ok: false, error: errorSpec(400, 'INVALID_REQUEST', 'metadata must be an object') };
  }
  const directives = parseDirectives(message);
  if (directives.status !== undefined && directives.status >= 400 && directives.status <= 599) {
    return { ok: false, error: errorSpec(directives.status) };
  }
  const faults: StreamFaults = fault
    ? { cut: fault.cut, stall: fault.stall, error: fault.error }
    : { cut: directives.cut, stall: directives.stall, error: directives.error };
  return {
    ok: true,
    message,
    metadata: body.metadata ?? undefined,
    directives,
    text: replyText(message, directives),
    faults,
  };
}

/**
 * For A1/B1: applies `[delay MS]` once, then the faults a one-response endpoint can show:
 * cut (socket destroyed, no answer), stall (no answer until the client or the emulator gives up),
 * error (500 BOT_ERROR). Returns the error to answer with, 'handled' when the socket is gone, or undefined.
 */
export async function sendFaults(
  ctx: EmulatorContext,
  req: IncomingMessage,
  res: ServerResponse,
  turn: OkTurn,
): Promise<ErrorSpec | 'handled' | undefined> {
  const gone = new AbortController();
  const onGone = () => gone.abort();
  res.on('close', onGone);
  ctx.closing.addEventListener('abort', onGone, { once: true });
  try {
    if (turn.directives.delay) await pause(turn.directives.delay, gone.signal);
    if (gone.signal.aborted) return 'handled';
    if (turn.faults.cut !== undefined) {
      req.socket.destroy();
      return 'handled';
    }
    if (turn.faults.stall !== undefined) {
      await whenAborted(gone.signal);
      req.socket.destroy();
      return 'handled';
    }
    if (turn.faults.error !== undefined)
      return errorSpec(500, 'BOT_ERROR', 'The bot failed while answering (emulated)');
    return undefined;
  } finally {
    res.off('close', onGone);
    ctx.closing.removeEventListener('abort', onGone);
  }
}

/**
 * A1/B1 after validation: the one-response faults, then the user and assistant messages stored in
 * the conversation `open()` returns (called only now, so a failed turn leaves nothing behind).
 */
export async function answerTurn(
  ctx: EmulatorContext,
  call: ChatCall,
  turn: OkTurn,
  open: () => Conversation,
): Promise<{ conv: Conversation; replyId: string } | ErrorSpec | 'handled'> {
  const faulted = await sendFaults(ctx, call.req, call.res, turn);
  if (faulted) return faulted;
  const conv = open();
  ctx.store.addMessage(conv, 'user', turn.message, turn.metadata);
  return { conv, replyId: ctx.store.addMessage(conv, 'assistant', turn.text).id };
}

/**
 * A2/B2 after validation: stores the user message and streams the reply in the current format.
 * The assistant message is stored (and its id put in the end frame) once all text went out.
 */
export async function streamTurn(
  ctx: EmulatorContext,
  call: ChatCall,
  turn: OkTurn,
  conv: Conversation,
  reveal: { headers: Record<string, string>; startIds: FrameIds; doneIds: FrameIds },
): Promise<void> {
  ctx.store.addMessage(conv, 'user', turn.message, turn.metadata);
  const { protocol, agent, chunks } = turn.directives;
  const writer = protocol ? protocolWriter(protocol, ctx.opts.streamFormat) : writerFor(ctx.opts.streamFormat);
  const bytes = protocol === undefined && ctx.opts.streamFormat === 'plain';
  // An agent's work or a protocol: each part a frame (a plain stream has no events, only its text).
  const frames =
    (protocol !== undefined || agent !== undefined) && !bytes
      ? agentReplyParts(turn.text, chunks, agent).map((part) => writer.part(part))
      : undefined;
  const doneIds: FrameIds = { ...reveal.doneIds };
  call.record.status = 200;
  await runStream(
    call.req,
    call.res,
    {
      writer,
      bytes,
      headers: { 'content-type': writer.contentType, ...reveal.headers },
      startIds: reveal.startIds,
      doneIds,
      text: turn.text,
      frames,
      pieces: chunks,
      delayMs: turn.directives.delay ?? ctx.opts.chunkDelayMs,
      splitWrites: ctx.opts.splitWrites,
      ...turn.faults,
      onComplete: () => {
        doneIds.messageId = ctx.store.addMessage(conv, 'assistant', turn.text).id;
      },
    },
    ctx.closing,
    ctx.live,
  );
}
