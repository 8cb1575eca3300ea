import { createParser, type EventSourceParser } from 'eventsource-parser';
import { type DecodedEvent, EventCollector } from './event-rules.js';
import type { DecoderOptions, StreamDecoder } from './stream-decoder.js';

// text/event-stream. eventsource-parser does the field parsing; line ends are made LF here first,
// because the parser holds back a CR at the end of a chunk (it might be half of a CRLF), which
// would delay every event of a CR-only stream until the next event's first byte.
// The parser is linear: pieces of an unfinished line are kept in a list and joined once, when the
// line ends; a complete line is read once. Its maxBufferSize bounds an event that never ends.

export class SseDecoder implements StreamDecoder {
  private readonly utf8 = new TextDecoder('utf-8');
  private readonly events = new EventCollector();
  private readonly parser: EventSourceParser;
  /** The previous piece ended with CR: an LF opening the next piece belongs to that line end. */
  private afterCr = false;

  constructor(private readonly opts: DecoderOptions = {}) {
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

  push(chunk: Uint8Array): DecodedEvent[] {
    this.feed(this.utf8.decode(chunk, { stream: true }));
    return this.events.take();
  }

  finish(): DecodedEvent[] {
    this.feed(this.utf8.decode());
    // The body ended: an event not yet closed by a blank line still counts.
    if (!this.events.done) this.parser.feed('\n\n');
    this.events.end();
    return this.events.take();
  }

  private feed(text: string): void {
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
