import { parseObject, TextDecoderBase } from './event-rules.js';

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
//
// A preamble: when the first non-blank line starts neither an object nor an array (`)]}'`, a banner), it is
// held, and decided by what follows: if the next object parses with its line, the preamble is
// dropped and the body read as JSON; if text or a broken object comes first (or the body ends),
// the body is text from the preamble on, as without the rule. One line at most, held once.

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
  /** The first non-blank line is not an object: maybe a preamble, held until its line ends. */
  | 'preamble'
  /** The rest of the body is text. */
  | 'text';

export class JsonStreamDecoder extends TextDecoderBase {
  private mode: Mode = 'between';
  /** Raw text since the start of the line the current object began on (or of the blank line so far). */
  private held: string[] = [];
  private heldLength = 0;
  /** Raw text from the start of a preamble line up to `held`, while undecided. */
  private preamble: string[] | undefined;
  private preambleLength = 0;
  /** No non-blank line seen yet: only the first line may be a preamble. */
  private firstLine = true;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Text mode: the last piece ended with CR, dropped if an LF comes next (CRLF → LF). */
  private pendingCr = false;

  protected override atEnd(): void {
    if (this.events.done) return;
    if (this.mode === 'after') {
      if (!this.complete()) this.toText('', 0);
    } else if (this.mode === 'object' || this.mode === 'preamble' || this.preamble !== undefined) {
      this.toText('', 0);
    }
    // A CR ending the body ends its last line.
    this.pendingCr = false;
  }

  protected feed(text: string): void {
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
            // Blank lines after an undecided preamble are text if the preamble turns out to be.
            if (this.preamble !== undefined) this.keepForPreamble(text.slice(from, i + 1));
            else this.drop();
            from = i + 1;
          } else if (c === OPEN_BRACE) {
            this.firstLine = false;
            this.mode = 'object';
            this.depth = 1;
            this.inString = false;
            this.escaped = false;
          } else if (!isBlank(c)) {
            // A line starting an array is JSON, not a preamble (a JSON array stays text).
            if (!this.firstLine || c === OPEN_BRACKET) {
              this.toText(text, from);
              return;
            }
            this.firstLine = false;
            this.mode = 'preamble';
          }
          break;
        case 'preamble':
          if (c === LF) {
            this.keepForPreamble(text.slice(from, i + 1));
            from = i + 1;
            this.mode = 'between';
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
    if (max !== undefined && this.heldLength + this.preambleLength > max) {
      this.preamble = undefined;
      this.preambleLength = 0;
      this.drop();
      this.events.end('too_long');
    }
  }

  private hold(piece: string): void {
    if (piece === '') return;
    this.held.push(piece);
    this.heldLength += piece.length;
  }

  /** What is held, and `piece` after it, moves to the undecided preamble. */
  private keepForPreamble(piece: string): void {
    this.preamble ??= [];
    this.preamble.push(...this.held, piece);
    this.preambleLength += this.heldLength + piece.length;
    this.drop();
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
    // An object after the first line: that line was a preamble, never shown.
    this.preamble = undefined;
    this.preambleLength = 0;
    this.mode = 'between';
    this.events.json(obj);
    return true;
  }

  /** From here on the body is text: what is held, then `text` from `from`. */
  private toText(text: string, from: number): void {
    this.mode = 'text';
    const held = (this.preamble?.join('') ?? '') + this.held.join('');
    this.preamble = undefined;
    this.preambleLength = 0;
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
