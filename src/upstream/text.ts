import { type DecodedEvent, EventCollector } from './event-rules.js';
import type { StreamDecoder } from './stream-decoder.js';

/** Any other content type: the bytes are the text, decoded across chunk bounds. */
export class PlainTextDecoder implements StreamDecoder {
  private readonly utf8 = new TextDecoder('utf-8');
  private readonly events = new EventCollector();

  push(chunk: Uint8Array): DecodedEvent[] {
    this.events.text(this.utf8.decode(chunk, { stream: true }));
    return this.events.take();
  }

  finish(): DecodedEvent[] {
    this.events.text(this.utf8.decode());
    this.events.end();
    return this.events.take();
  }
}
