import { parseObject, TextDecoderBase } from './event-rules.js';

// application/x-ndjson, application/jsonl: one JSON object a line; a line that is no JSON object is
// itself the text. Each new piece is searched for line ends once, and each line parsed once: the
// piece of a line not yet ended is kept aside (bounded by maxBuffered), never searched again.
// A preamble: a first non-blank line that is no JSON object nor array (`)]}'`, a banner) is held until the
// next non-blank line; if that one is an object, the first was a preamble and is dropped, else it
// is text as any other. Streamed application/json, where an object may span lines, is json-stream.ts.

export class JsonLinesDecoder extends TextDecoderBase {
  private partial = '';
  /** The first non-blank line, when it is no object and the next line has not decided it yet. */
  private preamble: string | undefined;
  private firstLine = true;

  protected override atEnd(): void {
    if (this.partial !== '') this.line(this.partial);
    this.partial = '';
    this.flushPreamble();
  }

  protected feed(text: string): void {
    if (text === '' || this.events.done) return;
    if (this.opts.counter) this.opts.counter.scanned += text.length;
    let nl = text.indexOf('\n');
    if (nl === -1) {
      this.partial += text;
    } else {
      this.line(this.partial + text.slice(0, nl));
      let start = nl + 1;
      for (nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
        this.line(text.slice(start, nl));
        start = nl + 1;
      }
      this.partial = text.slice(start);
    }
    const max = this.opts.maxBuffered;
    if (max !== undefined && this.partial.length > max) {
      this.partial = '';
      this.events.end('too_long');
    }
  }

  private line(raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    if (this.opts.counter) this.opts.counter.parses++;
    const obj = parseObject(line);
    const first = this.firstLine;
    this.firstLine = false;
    if (obj) {
      this.preamble = undefined;
      this.events.json(obj);
    } else if (first && !line.trimStart().startsWith('[')) {
      this.preamble = line;
    } else {
      this.flushPreamble();
      this.events.text(line);
    }
  }

  private flushPreamble(): void {
    if (this.preamble === undefined) return;
    this.events.text(this.preamble);
    this.preamble = undefined;
  }
}
