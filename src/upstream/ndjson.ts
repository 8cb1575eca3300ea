import { type DecodedEvent, EventCollector, parseObject } from './event-rules.js';
import type { StreamDecoder } from './stream-decoder.js';

// application/x-ndjson, application/jsonl (one JSON object a line) and streamed application/json,
// where one object may also span several lines (a pretty-printed body): lines are gathered until
// they parse. A line (or, for JSON, a body) that is no JSON object is itself the text.

export class JsonLinesDecoder implements StreamDecoder {
  private readonly utf8 = new TextDecoder('utf-8');
  private readonly events = new EventCollector();
  private partial = '';
  /** application/json: lines of an object not yet complete. */
  private gathered: string[] = [];

  constructor(private readonly multiline: boolean) {}

  push(chunk: Uint8Array): DecodedEvent[] {
    this.feed(this.utf8.decode(chunk, { stream: true }));
    return this.events.take();
  }

  finish(): DecodedEvent[] {
    this.feed(this.utf8.decode());
    if (this.partial !== '') this.line(this.partial);
    this.partial = '';
    if (this.gathered.length > 0) this.events.text(this.gathered.join('\n'));
    this.gathered = [];
    this.events.end();
    return this.events.take();
  }

  private feed(text: string): void {
    if (text === '' || this.events.done) return;
    let start = 0;
    let nl = text.indexOf('\n');
    if (nl === -1) {
      this.partial += text;
      return;
    }
    this.line(this.partial + text.slice(0, nl));
    start = nl + 1;
    for (nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
      this.line(text.slice(start, nl));
      start = nl + 1;
    }
    this.partial = text.slice(start);
  }

  private line(raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (!this.multiline) {
      if (line.trim() === '') return;
      const obj = parseObject(line);
      if (obj) this.events.json(obj);
      else this.events.text(line);
      return;
    }
    if (this.gathered.length === 0 && line.trim() === '') return;
    this.gathered.push(line);
    // Only a line closing an object can complete one; saves re-parsing every line of a big body.
    if (!line.trimEnd().endsWith('}')) return;
    const obj = parseObject(this.gathered.join('\n'));
    if (obj) {
      this.gathered = [];
      this.events.json(obj);
    }
  }
}
