import type { AgentFile, AgentSource, AgentStep, EndReason, StreamEvent } from '../core/chat-port.js';
import { AgentReader, type AgentSink, carriesReplyIds, protocolOf, responseIdOf } from './agent-events.js';

// The rules of CONTRACT.md §4 "Upstream streams" that every stream format shares: what a decoder
// is (StreamDecoder), and how one event (an SSE event, an NDJSON line, a streamed JSON object)
// becomes text, ids, the end, or an error. An agent's events (steps, sources, files) are read by
// agent-events.ts first; the tolerant rules here get what no known protocol claims. The decoders
// (stream-reader.ts's SSE one, ndjson.ts, json-stream.ts, text.ts) implement it;
// stream-reader.ts's `createDecoder` picks one.

/** What a decoder produces: the port's events, plus an in-band error the reader turns into a ChatError. */
export type DecodedEvent = StreamEvent | { type: 'error'; message: string; code?: string };

/**
 * Bytes of a streamed reply in, events out, whatever the chunking. Synchronous and pure. Every
 * decoder does work in proportion to the bytes it gets: a new chunk is looked at once, never the
 * text before it again, and each JSON value is parsed once (a hostile upstream sending tiny chunks
 * must not cost quadratic CPU on the event loop).
 */
export interface StreamDecoder {
  /** Feed the next bytes; returns the events they complete (text of one push merged). */
  push(chunk: Uint8Array): DecodedEvent[];
  /** The body ended normally: flush what is pending; always ends with `end` unless an error came. */
  finish(): DecodedEvent[];
}

/** A decoder's work, counted for the tests and the bench (not timing: counts stay exact). */
export interface DecodeCounter {
  /** Characters the decoder's own code looked at; linear decoding keeps this at the characters received. */
  scanned: number;
  /** JSON.parse attempts: one per event, line or object at most. */
  parses: number;
}

export interface DecoderOptions {
  /**
   * The most characters held back while an event, a line or a JSON object is incomplete. Past it
   * the stream ends with `{ type: 'end', reason: 'too_long' }`: an endless line must not fill memory.
   */
  maxBuffered?: number | undefined;
  counter?: DecodeCounter | undefined;
  /**
   * The largest file an agent event may carry inline (base64 or a data URL), in bytes; a larger
   * one is passed on named, without its bytes. Default 8 MB (agent-files.ts).
   */
  maxFileBytes?: number | undefined;
  /**
   * OpenAI Responses (form-responses.ts): the id of the response a `response.created` /
   * `response.completed` event names is the conversation (the next turn's `previous_response_id`)
   * and the reply's message. Off for every other form: there a Responses event passed through by
   * an agent names no conversation of the bridge's.
   */
  responseIds?: boolean | undefined;
}

type Json = Record<string, unknown>;

const TEXT_KEYS = ['delta', 'content', 'text', 'token', 'response', 'chunk'] as const;
const CONVERSATION_KEYS = ['conversationId', 'conversation_id', 'sessionId', 'session_id'] as const;
const MESSAGE_KEYS = ['messageId', 'message_id'] as const;
const END_NAMES = new Set(['done', 'end', 'complete', 'stop']);
const END_TYPES = new Set(['done', 'end', 'complete']);
/** Keep-alive events some servers send; their data is not reply text. */
const IGNORED_NAMES = new Set(['ping', 'heartbeat', 'keepalive', 'keep-alive']);

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The first value among `keys` of `obj` that is a string (numbers count, as ids are sometimes numeric). */
export function firstString(obj: Json | undefined, keys: readonly string[], numbers = false): string | undefined {
  if (!obj) return undefined;
  for (const k of keys) {
    const v = obj[k];
    if (typeof v === 'string') return v;
    if (numbers && typeof v === 'number' && Number.isFinite(v)) return String(v);
  }
  return undefined;
}

/** Parse `text` when it looks like a JSON object; anything else (including other JSON values) is not one. */
export function parseObject(text: string): Json | undefined {
  const t = text.trimStart();
  if (!t.startsWith('{')) return undefined;
  try {
    const v: unknown = JSON.parse(t);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The reply text of one JSON event: the first string among the contract's keys, in its order. */
export function textOf(obj: Json): string | undefined {
  const data = isObject(obj.data) ? obj.data : undefined;
  const choices = Array.isArray(obj.choices) ? obj.choices : undefined;
  const choice = isObject(choices?.[0]) ? choices[0] : undefined;
  const choiceDelta = isObject(choice?.delta) ? choice.delta : undefined;
  // Beyond the contract, last: object deltas of the `{"delta":{"text":…}}` kind.
  const delta = isObject(obj.delta) ? obj.delta : undefined;
  return (
    firstString(obj, TEXT_KEYS) ??
    firstString(data, TEXT_KEYS) ??
    firstString(choiceDelta, ['content']) ??
    firstString(delta, ['text', 'content'])
  );
}

export function idsOf(obj: Json): { conversationId?: string; messageId?: string } {
  const data = isObject(obj.data) ? obj.data : undefined;
  const conversationId = firstString(obj, CONVERSATION_KEYS, true) ?? firstString(data, CONVERSATION_KEYS, true);
  const messageId = firstString(obj, MESSAGE_KEYS, true) ?? firstString(data, MESSAGE_KEYS, true);
  return {
    ...(conversationId !== undefined && conversationId !== '' ? { conversationId } : {}),
    ...(messageId !== undefined && messageId !== '' ? { messageId } : {}),
  };
}

/** The error an event reports: by its `error` field or `"type":"error"`, or any event when `named` error. */
function errorOf(obj: Json, named: boolean): { message: string; code?: string } | undefined {
  const err = obj.error;
  const hasError = err !== undefined && err !== null && err !== false;
  if (!hasError && obj.type !== 'error' && !named) return undefined;
  const errObj = isObject(err) ? err : undefined;
  const message =
    (typeof err === 'string' ? err : undefined) ??
    firstString(errObj, ['message', 'detail', 'error']) ??
    firstString(obj, ['message', 'detail']) ??
    textOf(obj) ??
    JSON.stringify(obj).slice(0, 200);
  const code = firstString(errObj, ['code', 'type'], true) ?? firstString(obj, ['code'], true);
  return code === undefined ? { message } : { message, code };
}

/**
 * Collects the events of one stream: applies the rules, drops empty text, repeats no unchanged
 * ids, merges adjacent text pieces of one push, and ignores everything after the end or an error.
 */
export class EventCollector implements AgentSink {
  private out: DecodedEvent[] = [];
  private ended = false;
  private lastConversationId: string | undefined;
  private lastMessageId: string | undefined;
  private readonly agent: AgentReader;
  private readonly responseIds: boolean;

  constructor(opts: DecoderOptions = {}) {
    this.agent = new AgentReader(this, opts.maxFileBytes);
    this.responseIds = opts.responseIds === true;
  }

  get done(): boolean {
    return this.ended;
  }

  take(): DecodedEvent[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  text(text: string): void {
    if (this.ended || text === '') return;
    const last = this.out[this.out.length - 1];
    if (last?.type === 'text') last.text += text;
    else this.out.push({ type: 'text', text });
  }

  step(step: AgentStep): void {
    if (!this.ended) this.out.push({ type: 'step', step });
  }

  source(source: AgentSource): void {
    if (!this.ended) this.out.push({ type: 'source', source });
  }

  file(file: AgentFile): void {
    if (!this.ended) this.out.push({ type: 'file', file });
  }

  end(reason?: EndReason): void {
    if (this.ended) return;
    // Nothing of a finished reply is still at work.
    this.agent.finish();
    this.ended = true;
    this.out.push(reason === undefined ? { type: 'end' } : { type: 'end', reason });
  }

  error(message: string, code?: string): void {
    if (this.ended) return;
    this.ended = true;
    this.out.push(code === undefined ? { type: 'error', message } : { type: 'error', message, code });
  }

  /** One JSON object (an NDJSON line, SSE data), with the SSE event name when there is one. */
  json(obj: Json, eventName?: string): void {
    if (this.ended) return;
    const name = eventName?.toLowerCase();
    const protocol = name === 'error' ? undefined : protocolOf(obj, name);
    // A chunk of a chat completion may still be an error; an agent event's own `error` field is not.
    if (protocol !== undefined && protocol !== 'chat') {
      if (carriesReplyIds(protocol, obj)) this.ids(idsOf(obj));
      if (protocol === 'responses' && this.responseIds) {
        const id = responseIdOf(obj);
        if (id !== undefined) this.ids({ conversationId: id, messageId: id });
      }
      this.agent.read(protocol, obj, name);
      return;
    }
    const err = errorOf(obj, name === 'error');
    if (err) {
      this.error(err.message, err.code);
      return;
    }
    this.ids(idsOf(obj));
    const type = typeof obj.type === 'string' ? obj.type.toLowerCase() : undefined;
    // A closing event often repeats the whole reply: its text is never appended.
    if ((name && END_NAMES.has(name)) || obj.done === true || (type && END_TYPES.has(type))) {
      this.end();
      return;
    }
    if (name && IGNORED_NAMES.has(name)) return;
    if (protocol === 'chat') {
      this.agent.read(protocol, obj, name);
      return;
    }
    const text = textOf(obj);
    if (text !== undefined) this.text(text);
  }

  /** One SSE event: JSON data by the JSON rules, other data is itself the text. */
  sse(data: string, eventName?: string): void {
    if (this.ended) return;
    const obj = parseObject(data);
    if (obj) {
      this.json(obj, eventName);
      return;
    }
    const name = eventName?.toLowerCase();
    if (name === 'error') this.error(data === '' ? 'upstream stream error' : data);
    else if (name && protocolOf({}, name) === 'seed') this.agent.readPlain(name, data);
    else if (data.trim() === '[DONE]' || (name && END_NAMES.has(name))) this.end();
    else if (!(name && IGNORED_NAMES.has(name))) this.text(data);
  }

  private ids(ids: { conversationId?: string; messageId?: string }): void {
    const conversationId = ids.conversationId !== this.lastConversationId ? ids.conversationId : undefined;
    const messageId = ids.messageId !== this.lastMessageId ? ids.messageId : undefined;
    if (conversationId === undefined && messageId === undefined) return;
    if (conversationId !== undefined) this.lastConversationId = conversationId;
    if (messageId !== undefined) this.lastMessageId = messageId;
    this.out.push({
      type: 'ids',
      ...(conversationId !== undefined ? { conversationId } : {}),
      ...(messageId !== undefined ? { messageId } : {}),
    });
  }
}

/**
 * What every decoder does with the bytes: decodes them as UTF-8 across chunk bounds, feeds the
 * text to its own reading (`feed`), and hands back the events that completed. At the body's end
 * its own `atEnd` flushes what it kept back before the stream ends.
 */
export abstract class TextDecoderBase implements StreamDecoder {
  private readonly utf8 = new TextDecoder('utf-8');
  protected readonly events: EventCollector;

  constructor(protected readonly opts: DecoderOptions = {}) {
    this.events = new EventCollector(opts);
  }

  push(chunk: Uint8Array): DecodedEvent[] {
    this.feed(this.utf8.decode(chunk, { stream: true }));
    return this.events.take();
  }

  finish(): DecodedEvent[] {
    this.feed(this.utf8.decode());
    this.atEnd();
    this.events.end();
    return this.events.take();
  }

  /** Reads the next text (possibly empty). */
  protected abstract feed(text: string): void;

  /** The body ended: what the decoder kept back (an unfinished line, object or event) is read now. */
  protected atEnd(): void {}
}
