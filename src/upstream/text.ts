import { type DecodedEvent, EventCollector } from './event-rules.js';
import type { DecoderOptions, StreamDecoder } from './event-rules.js';

/** Any other content type: the bytes are the text, decoded across chunk bounds. Holds nothing back. */
export class PlainTextDecoder implements StreamDecoder {
  private readonly utf8 = new TextDecoder('utf-8');
  private readonly events = new EventCollector();

  constructor(private readonly opts: DecoderOptions = {}) {}

  push(chunk: Uint8Array): DecodedEvent[] {
    this.text(this.utf8.decode(chunk, { stream: true }));
    return this.events.take();
  }

  finish(): DecodedEvent[] {
    this.text(this.utf8.decode());
    this.events.end();
    return this.events.take();
  }

  private text(text: string): void {
    if (this.opts.counter) this.opts.counter.scanned += text.length;
    this.events.text(text);
  }
}
