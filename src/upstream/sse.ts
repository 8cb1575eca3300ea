import { createParser, type EventSourceParser } from 'eventsource-parser';
import { type DecodedEvent, EventCollector } from './event-rules.js';
import type { StreamDecoder } from './stream-decoder.js';

// text/event-stream. eventsource-parser does the field parsing; line ends are made LF here first,
// because the parser holds back a CR at the end of a chunk (it might be half of a CRLF), which
// would delay every event of a CR-only stream until the next event's first byte.

export class SseDecoder implements StreamDecoder {
  private readonly utf8 = new TextDecoder('utf-8');
  private readonly events = new EventCollector();
  private readonly parser: EventSourceParser;
  /** The previous piece ended with CR: an LF opening the next piece belongs to that line end. */
  private afterCr = false;

  constructor() {
    this.parser = createParser({ onEvent: (e) => this.events.sse(e.data, e.event) });
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
    if (text === '' || this.events.done) return;
    let s = text;
    if (this.afterCr && s.charCodeAt(0) === 10) s = s.slice(1);
    this.afterCr = text.charCodeAt(text.length - 1) === 13;
    if (s.includes('\r')) s = s.replace(/\r\n?/g, '\n');
    if (s !== '') this.parser.feed(s);
  }
}
