import { type DecodedEvent, EventCollector, parseObject } from './event-rules.js';
import type { DecoderOptions, StreamDecoder } from './stream-decoder.js';

// Streamed application/json: one JSON object a line, or objects spanning lines (a pretty-printed
// body). Blank lines between objects are skipped. Anything else makes the rest of the body, from
// the start of the line where it began, the reply text (CRLF read as LF): a body that is not JSON
// objects, or objects with something else after them on their line.
//
// One pass over each character: a small scanner keeps the nesting depth and whether it is inside a
// string (and after a backslash), so it knows where an object closes without parsing it; the
// object is parsed once, when its line ends. An object that does not parse can't be the start of
// one that does (the scanner found where it must end), so from there on it is all text, which is
// passed on as it arrives.

const LF = 10;
const CR = 13;
const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

/** What String.prototype.trim removes, LF aside: a line of these is blank. */
function isBlank(c: number): boolean {
  return (
    c === 32 ||
    (c >= 9 && c <= 13) ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** JSON's own whitespace on the line after an object (LF ends the line). */
const isJsonSpace = (c: number) => c === 32 || c === 9 || c === CR;

type Mode =
  /** Before an object: the current line is blank so far. */
  | 'between'
  /** Inside an object, `depth` levels deep. */
  | 'object'
  /** An object closed; the rest of its line must be blank for it to count. */
  | 'after'
  /** The rest of the body is text. */
  | 'text';

export class JsonStreamDecoder implements StreamDecoder {
  private readonly utf8 = new TextDecoder('utf-8');
  private readonly events = new EventCollector();
  private mode: Mode = 'between';
  /** Raw text since the start of the line the current object began on (or of the blank line so far). */
  private held: string[] = [];
  private heldLength = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Text mode: the last piece ended with CR, dropped if an LF comes next (CRLF → LF). */
  private pendingCr = false;

  constructor(private readonly opts: DecoderOptions = {}) {}

  push(chunk: Uint8Array): DecodedEvent[] {
    this.feed(this.utf8.decode(chunk, { stream: true }));
    return this.events.take();
  }

  finish(): DecodedEvent[] {
    this.feed(this.utf8.decode());
    if (!this.events.done) {
      if (this.mode === 'after') {
        if (!this.complete()) this.toText('', 0);
      } else if (this.mode === 'object') this.toText('', 0);
      // A CR ending the body ends its last line.
      this.pendingCr = false;
    }
    this.events.end();
    return this.events.take();
  }

  private feed(text: string): void {
    if (text === '' || this.events.done) return;
    if (this.opts.counter) this.opts.counter.scanned += text.length;
    if (this.mode === 'text') {
      this.emitText(text);
      return;
    }
    /** Where the part of `text` not yet in `held` starts. */
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      switch (this.mode) {
        case 'between':
          if (c === LF) {
            this.drop();
            from = i + 1;
          } else if (c === OPEN_BRACE) {
            this.mode = 'object';
            this.depth = 1;
            this.inString = false;
            this.escaped = false;
          } else if (!isBlank(c)) {
            this.toText(text, from);
            return;
          }
          break;
        case 'object':
          if (this.inString) {
            if (this.escaped) this.escaped = false;
            else if (c === BACKSLASH) this.escaped = true;
            else if (c === QUOTE) this.inString = false;
          } else if (c === QUOTE) {
            this.inString = true;
          } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
            this.depth++;
          } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
            // Where a valid object must end; a mismatched bracket just fails to parse.
            if (--this.depth === 0) this.mode = 'after';
          }
          break;
        case 'after':
          if (c === LF) {
            this.hold(text.slice(from, i));
            if (!this.complete()) {
              this.toText(`\n${text.slice(i + 1)}`, 0);
              return;
            }
            from = i + 1;
          } else if (!isJsonSpace(c)) {
            this.toText(text, from);
            return;
          }
          break;
      }
    }
    this.hold(text.slice(from));
    const max = this.opts.maxBuffered;
    if (max !== undefined && this.heldLength > max) {
      this.drop();
      this.events.end('too_long');
    }
  }

  private hold(piece: string): void {
    if (piece === '') return;
    this.held.push(piece);
    this.heldLength += piece.length;
  }

  private drop(): void {
    this.held = [];
    this.heldLength = 0;
  }

  /** The object held is complete with its line: an event if it parses, else false (held kept). */
  private complete(): boolean {
    if (this.opts.counter) this.opts.counter.parses++;
    const obj = parseObject(this.held.join(''));
    if (!obj) return false;
    this.drop();
    this.mode = 'between';
    this.events.json(obj);
    return true;
  }

  /** From here on the body is text: what is held, then `text` from `from`. */
  private toText(text: string, from: number): void {
    this.mode = 'text';
    const held = this.held.join('');
    this.drop();
    this.emitText(held + text.slice(from));
  }

  private emitText(text: string): void {
    let s = text;
    if (this.pendingCr) {
      this.pendingCr = false;
      if (s.charCodeAt(0) !== LF) s = `\r${s}`;
    }
    if (s.charCodeAt(s.length - 1) === CR) {
      this.pendingCr = true;
      s = s.slice(0, -1);
    }
    if (s.includes('\r\n')) s = s.replace(/\r\n/g, '\n');
    this.events.text(s);
  }
}
