import { TextDecoderBase } from './event-rules.js';

/** Any other content type: the bytes are the text, decoded across chunk bounds. Holds nothing back. */
export class PlainTextDecoder extends TextDecoderBase {
  protected feed(text: string): void {
    if (this.opts.counter) this.opts.counter.scanned += text.length;
    this.events.text(text);
  }
}
