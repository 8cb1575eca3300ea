import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { AgentSource, AgentStep } from '../core/chat-port.js';
import {
  type DecodedEvent,
  type DecoderOptions,
  firstString,
  isObject,
  parseObject,
  type StreamDecoder,
} from './event-rules.js';

// The stream of OpenAI's Responses API (`stream: true`): typed SSE events. Only
// `response.output_text.delta` (and a refusal's delta) is answer text; the response id of
// `response.created` / `response.completed` names the conversation (previous_response_id of the
// next turn); `response.completed` / `response.incomplete` end it; `error` / `response.failed`
// are errors. Tool calls and web searches are steps, URL citations sources. Reasoning, tool
// arguments and outputs, and the `.done` events that repeat the text are never text.

type Json = Record<string, unknown>;

const TEXT_TYPES = new Set(['response.output_text.delta', 'response.refusal.delta']);
const ID_TYPES = new Set(['response.created', 'response.in_progress', 'response.completed', 'response.incomplete']);
const END_TYPES = new Set(['response.completed', 'response.incomplete', 'response.done']);

/** Output items that are an agent's work, and how a step names one without its own name. */
const STEP_TITLES: Record<string, string> = {
  function_call: 'Calling a tool',
  custom_tool_call: 'Calling a tool',
  web_search_call: 'Searching the web',
  file_search_call: 'Searching files',
  code_interpreter_call: 'Running code',
  computer_call: 'Using the computer',
  image_generation_call: 'Making an image',
  mcp_call: 'Calling a tool',
  local_shell_call: 'Running a command',
};

export class ResponsesDecoder implements StreamDecoder {
  private readonly utf8 = new TextDecoder('utf-8');
  private readonly parser: EventSourceParser;
  private out: DecodedEvent[] = [];
  private stopped = false;
  private responseId: string | undefined;
  private readonly sources = new Set<string>();
  private afterCr = false;

  constructor(opts: DecoderOptions = {}) {
    this.parser = createParser({
      onEvent: (e) => {
        if (opts.counter) opts.counter.parses++;
        this.event(e.data, e.event);
      },
      onError: (err) => {
        if (err.type === 'max-buffer-size-exceeded') this.end('too_long');
      },
      ...(opts.maxBuffered !== undefined ? { maxBufferSize: opts.maxBuffered } : {}),
    });
  }

  push(chunk: Uint8Array): DecodedEvent[] {
    this.feed(this.utf8.decode(chunk, { stream: true }));
    return this.take();
  }

  finish(): DecodedEvent[] {
    this.feed(this.utf8.decode());
    if (!this.stopped) this.parser.feed('\n\n');
    this.end();
    return this.take();
  }

  private take(): DecodedEvent[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  private feed(text: string): void {
    if (text === '' || this.stopped) return;
    // Line ends made LF (as stream-reader.ts's SseDecoder does), a CR split from its LF included.
    let s = text;
    if (this.afterCr && s.charCodeAt(0) === 10) s = s.slice(1);
    this.afterCr = text.charCodeAt(text.length - 1) === 13;
    if (s.includes('\r')) s = s.replace(/\r\n?/g, '\n');
    if (s !== '') this.parser.feed(s);
  }

  private end(reason?: 'too_long'): void {
    if (this.stopped) return;
    this.stopped = true;
    this.out.push(reason === undefined ? { type: 'end' } : { type: 'end', reason });
  }

  private error(message: string, code: string | undefined): void {
    if (this.stopped) return;
    this.stopped = true;
    this.out.push(code === undefined ? { type: 'error', message } : { type: 'error', message, code });
  }

  private event(data: string, name: string | undefined): void {
    if (this.stopped) return;
    if (data.trim() === '[DONE]') return this.end();
    const obj = parseObject(data);
    if (!obj) return; // keep-alives, comments: nothing of the answer
    const type = firstString(obj, ['type']) ?? name ?? '';
    if (type === 'error' || name === 'error') return this.failed(isObject(obj.error) ? obj.error : obj);
    if (type === 'response.failed') {
      const response = isObject(obj.response) ? obj.response : {};
      return this.failed(isObject(response.error) ? response.error : { message: 'the response failed' });
    }
    if (ID_TYPES.has(type)) this.ids(obj);
    if (TEXT_TYPES.has(type)) {
      const delta = firstString(obj, ['delta']);
      if (delta !== undefined && delta !== '') this.text(delta);
    } else if (type === 'response.output_item.added' || type === 'response.output_item.done') {
      this.step(obj.item, type.endsWith('.done'));
    } else if (type === 'response.output_text.annotation.added') {
      this.source(obj.annotation);
    }
    if (END_TYPES.has(type)) this.end();
  }

  private failed(err: Json): void {
    this.error(firstString(err, ['message']) ?? 'the response failed', firstString(err, ['code', 'type'], true));
  }

  private text(text: string): void {
    const last = this.out[this.out.length - 1];
    if (last?.type === 'text') last.text += text;
    else this.out.push({ type: 'text', text });
  }

  private ids(obj: Json): void {
    const response = isObject(obj.response) ? obj.response : undefined;
    const id = firstString(response, ['id']);
    if (id === undefined || id === '' || id === this.responseId) return;
    this.responseId = id;
    this.out.push({ type: 'ids', conversationId: id, messageId: id });
  }

  private step(item: unknown, done: boolean): void {
    if (!isObject(item)) return;
    const kind = firstString(item, ['type']) ?? '';
    const fallback = STEP_TITLES[kind];
    const id = firstString(item, ['id', 'call_id']);
    if (fallback === undefined || id === undefined) return;
    const failed = item.status === 'failed' || item.status === 'incomplete';
    const step: AgentStep = {
      id,
      title: firstString(item, ['name']) ?? fallback,
      state: !done ? 'running' : failed ? 'failed' : 'done',
    };
    this.out.push({ type: 'step', step });
  }

  private source(annotation: unknown): void {
    if (!isObject(annotation) || annotation.type !== 'url_citation') return;
    const url = firstString(annotation, ['url']);
    if (url === undefined || this.sources.has(url)) return;
    this.sources.add(url);
    const title = firstString(annotation, ['title']);
    const source: AgentSource = title === undefined ? { url } : { url, title };
    this.out.push({ type: 'source', source });
  }
}
