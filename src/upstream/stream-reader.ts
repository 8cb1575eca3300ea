import { ChatError, type ChatStream, type EndReason, type StreamEvent } from '../core/chat-port.js';
import { createParser, type EventSourceParser } from 'eventsource-parser';
import { type DecoderOptions, type StreamDecoder, TextDecoderBase } from './event-rules.js';
import { DEFAULT_MAX_FILE_BYTES } from './agent-files.js';
import { JsonStreamDecoder } from './json-stream.js';
import { JsonLinesDecoder } from './ndjson.js';
import { PlainTextDecoder } from './text.js';

// A streamed response body → the port's ChatStream. The decoder turns bytes into events; this
// part owns the connection: a body that fails (reset, idle timeout) after the headers is an
// `interrupted` reply, an `error` event is a `stream_error`, and every way out releases the socket.
// It also bounds a reply: past maxChars of text (or a decoder holding back too much) it stops
// reading, aborts the request and ends with `{ type: 'end', reason: 'too_long' }`. An agent's steps,
// sources and files pass through beside the text and do not count toward that cap.
// Which decoder a content type gets (`formatOf`, `createDecoder`) is here too, with the SSE
// decoder, the usual one; a whole (one-response) body is read by `parseBody`.

/**
 * Bytes of upstream body allowed for `maxChars` of reply text: JSON escapes take up to 6 bytes for
 * one character, but 4 covers UTF-8 and ordinary escaping; 64 kB for envelopes and event framing.
 * Bounds what a decoder holds back in a stream, and a one-response (A1/B1) body before it is parsed.
 */
export const bytesForChars = (maxChars: number): number => 4 * maxChars + 64 * 1024;

/** Characters of base64 for `bytes` bytes. */
const base64Length = (bytes: number): number => 4 * Math.ceil(bytes / 3);

/** The first `n` UTF-16 units of `text`, without half a surrogate pair at the end. */
export function cutText(text: string, n: number): string {
  if (n <= 0) return '';
  if (text.length <= n) return text;
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

export interface StreamSource {
  body: AsyncIterable<Uint8Array>;
  contentType: string | undefined;
  /** X-Conversation-Id of the response, if any. */
  conversationId: string | undefined;
  /** Aborts the request: undici destroys the body and the socket. */
  abort: () => void;
  /** The caller's signal: when it aborts, the iterator throws its reason. */
  signal?: AbortSignal | undefined;
  endpoint: string;
  /** Keeps the API key out of error messages (an upstream could echo it). */
  redact?: (text: string) => string;
  /** Called once when the stream is finished, whichever way. */
  onClose?: () => void;
  /** How long to keep reading after the end event so the connection can be reused. */
  drainMs?: number;
  /** CHAT_REPLY_MAX_CHARS: the most reply text taken; beyond it the reply ends as too_long. */
  maxChars?: number | undefined;
  /** The largest file an agent event may carry inline, in bytes (DecoderOptions.maxFileBytes). */
  maxFileBytes?: number | undefined;
  /** A form whose stream has its own grammar (OpenAI Responses) brings its decoder; else by content type. */
  decoder?: ((opts: DecoderOptions) => StreamDecoder) | undefined;
}

const DRAIN_MS = 1_000;
const DRAIN_BYTES = 64 * 1024;

export function createChatStream(src: StreamSource): ChatStream {
  let cancelled = false;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    src.onClose?.();
  };
  const iterator = read(src, () => cancelled, close);
  return {
    conversationId: src.conversationId,
    cancel() {
      // After the end (or an error) there is nothing to abort: the connection may be draining for reuse.
      if (cancelled || closed) return;
      cancelled = true;
      src.abort();
      close();
    },
    [Symbol.asyncIterator]: () => iterator,
  };
}

/** Cut connections and idle timeouts are told apart only for the message. */
function cutMessage(err: unknown, endpoint: string): string {
  const code = (err as { code?: unknown })?.code;
  if (code === 'UND_ERR_BODY_TIMEOUT') return `${endpoint}: the upstream sent nothing for too long`;
  return `${endpoint}: the connection to the upstream was cut${typeof code === 'string' ? ` (${code})` : ''}`;
}

async function* read(src: StreamSource, isCancelled: () => boolean, close: () => void): AsyncGenerator<StreamEvent> {
  const maxChars = src.maxChars;
  const maxFileBytes = src.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  // An event may hold a file inline: one up to the file cap in base64 is read whole. A larger one
  // is named without its bytes while it fits the text's bound too; past both, it ends the reply as
  // too long, as an endless line does.
  const decoderOpts: DecoderOptions = {
    maxFileBytes,
    ...(maxChars !== undefined ? { maxBuffered: bytesForChars(maxChars) + base64Length(maxFileBytes) } : {}),
  };
  const decoder = src.decoder ? src.decoder(decoderOpts) : createDecoder(src.contentType, decoderOpts);
  const body = src.body[Symbol.asyncIterator]();
  let sawText = false;
  let chars = 0;
  let released = false;
  try {
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await body.next();
      } catch (err) {
        released = true;
        if (isCancelled()) return;
        if (src.signal?.aborted) throw src.signal.reason;
        throw new ChatError('interrupted', cutMessage(err, src.endpoint), { endpoint: src.endpoint, partial: sawText });
      }
      if (isCancelled()) return;
      const events = next.done ? decoder.finish() : decoder.push(next.value);
      let endSeen = next.done === true;
      let reason: EndReason | undefined;
      for (const ev of events) {
        if (ev.type === 'error') {
          const message = `${src.endpoint}: upstream stream error: ${ev.message}`;
          throw new ChatError('stream_error', src.redact ? src.redact(message) : message, {
            endpoint: src.endpoint,
            partial: sawText,
            ...(ev.code !== undefined ? { code: ev.code } : {}),
          });
        }
        if (ev.type === 'end') {
          endSeen = true;
          reason = ev.reason;
          break;
        }
        if (ev.type === 'text') {
          if (maxChars !== undefined && chars + ev.text.length > maxChars) {
            // Past the cap: no more is read. Abort first, then hand over the text that fits.
            released = true;
            src.abort();
            const kept = cutText(ev.text, maxChars - chars);
            if (kept !== '') yield { type: 'text', text: kept };
            endSeen = true;
            reason = 'too_long';
            break;
          }
          chars += ev.text.length;
          sawText = true;
        }
        yield ev;
      }
      if (endSeen) {
        // Release before the last event: a consumer may stop iterating once it has it.
        if (!released) {
          released = true;
          // A reply cut short is not read on: the rest could be endless.
          if (reason !== undefined) src.abort();
          else if (!next.done) void drain(body, src, src.drainMs ?? DRAIN_MS);
        }
        close();
        yield reason !== undefined ? { type: 'end', reason } : { type: 'end' };
        return;
      }
    }
  } finally {
    if (!released) src.abort();
    close();
  }
}

/**
 * After the end event the server usually closes the body at once; reading that last bit lets
 * undici keep the connection. A body that goes on is cut after a short while.
 */
async function drain(body: AsyncIterator<Uint8Array>, src: StreamSource, ms: number): Promise<void> {
  const timer = setTimeout(() => src.abort(), ms);
  let bytes = 0;
  try {
    for (;;) {
      const next = await body.next();
      if (next.done) return;
      bytes += next.value.byteLength;
      if (bytes > DRAIN_BYTES) {
        src.abort();
        return;
      }
    }
  } catch {
    // aborted or cut: nothing left to release
  } finally {
    clearTimeout(timer);
  }
}

/** The decoder for a response's content type (`formatOf`). */
export function createDecoder(contentType: string | undefined, opts: DecoderOptions = {}): StreamDecoder {
  switch (formatOf(contentType)) {
    case 'sse':
      return new SseDecoder(opts);
    case 'ndjson':
      return new JsonLinesDecoder(opts);
    case 'json':
      return new JsonStreamDecoder(opts);
    case 'text':
      return new PlainTextDecoder(opts);
  }
}

const JSON_LINES = new Set([
  'application/x-ndjson',
  'application/ndjson',
  'application/jsonl',
  'application/x-jsonl',
  'application/jsonlines',
  'application/x-jsonlines',
  'application/json-lines',
  'application/stream+json',
]);

export type StreamFormat = 'sse' | 'ndjson' | 'json' | 'text';

export function formatOf(contentType: string | undefined): StreamFormat {
  const mime = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (mime === 'text/event-stream') return 'sse';
  if (JSON_LINES.has(mime)) return 'ndjson';
  if (mime === 'application/json' || mime.endsWith('+json')) return 'json';
  return 'text';
}

/**
 * A whole body: its JSON, else its text (the caller reads it itself). A JSON body behind a
 * preamble line (`)]}'`, a banner) is its JSON: the preamble never becomes a reply. At most two
 * parses, whatever the body.
 */
export function parseBody(text: string, contentType: string | undefined): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // not JSON as it stands
  }
  const format = formatOf(contentType);
  const nl = text.indexOf('\n');
  if ((format === 'json' || format === 'ndjson') && nl !== -1 && !/^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text.slice(nl + 1));
    } catch {
      // not JSON after its first line either
    }
  }
  return text;
}

// text/event-stream. eventsource-parser does the field parsing; line ends are made LF here first,
// because the parser holds back a CR at the end of a chunk (it might be half of a CRLF), which
// would delay every event of a CR-only stream until the next event's first byte.
// The parser is linear: pieces of an unfinished line are kept in a list and joined once, when the
// line ends; a complete line is read once. Its maxBufferSize bounds an event that never ends.

export class SseDecoder extends TextDecoderBase {
  private readonly parser: EventSourceParser;
  /** The previous piece ended with CR: an LF opening the next piece belongs to that line end. */
  private afterCr = false;

  constructor(opts: DecoderOptions = {}) {
    super(opts);
    const counter = opts.counter;
    this.parser = createParser({
      onEvent: (e) => {
        if (counter) counter.parses++;
        this.events.sse(e.data, e.event);
      },
      onError: (err) => {
        // Other parse errors (unknown fields, a bad retry) are ignored, as the SSE spec says.
        if (err.type === 'max-buffer-size-exceeded') this.events.end('too_long');
      },
      ...(opts.maxBuffered !== undefined ? { maxBufferSize: opts.maxBuffered } : {}),
    });
  }

  protected override atEnd(): void {
    // The body ended: an event not yet closed by a blank line still counts.
    if (!this.events.done) this.parser.feed('\n\n');
  }

  protected feed(text: string): void {
    // After the end (or a buffer overflow, after which the parser refuses input) nothing is read.
    if (text === '' || this.events.done) return;
    if (this.opts.counter) this.opts.counter.scanned += text.length;
    let s = text;
    if (this.afterCr && s.charCodeAt(0) === 10) s = s.slice(1);
    this.afterCr = text.charCodeAt(text.length - 1) === 13;
    if (s.includes('\r')) s = s.replace(/\r\n?/g, '\n');
    if (s !== '') this.parser.feed(s);
  }
}
