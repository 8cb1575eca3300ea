import { fenceCloser } from './split.js';

/** How a reply ends (ReplyWriter.finish). */
export interface FinishOptions {
  /** Appended to the text when the reply has content (e.g. the interruption note). */
  note?: string;
  /** The whole reply when it has no content (e.g. an error message). */
  replacement?: string;
  /** The last write shows thumbs up/down (WriteOptions.feedback). */
  feedback?: boolean;
}

// What text a reply owes the platform: the reply as composed so far (prefix, upstream text, the
// note it ended with) and, per message, what the platform already shows. The writer reads both at
// the moment a write leaves, so a write always carries the newest text.

export const hasText = (s: string): boolean => /\S/.test(s);

/** The reply as composed: prefix + upstream text (+ a note once it ended). */
export class ReplyText {
  private appended = '';
  private prefix = '';
  private started = false;
  private endedFlag = false;
  /** Where the note appended by end() starts in content(): a cut never falls inside it. */
  private noteStart: number | undefined;

  constructor(private readonly prefixOf?: () => string) {}

  get ended(): boolean {
    return this.endedFlag;
  }

  get noteAt(): number | undefined {
    return this.noteStart;
  }

  /** False when nothing changed (empty delta, or the reply already ended). */
  append(delta: string): boolean {
    if (this.endedFlag || delta === '') return false;
    this.appended += delta;
    if (!this.started && hasText(this.appended)) {
      this.started = true;
      this.prefix = this.prefixOf?.() ?? '';
    }
    return true;
  }

  /** The upstream ended: add the note, or use the replacement when there is no content. */
  end(opts: FinishOptions): void {
    if (this.endedFlag) return;
    this.endedFlag = true;
    if (this.started) {
      // A code block the cut left open is closed first, so that the note is not shown as code.
      if (opts.note !== undefined) {
        this.appended += fenceCloser(this.content());
        this.noteStart = this.content().length;
        this.appended += opts.note;
      }
      return;
    }
    const text = opts.replacement ?? opts.note?.trimStart();
    if (text !== undefined && hasText(text)) {
      this.appended = text;
      this.started = true;
    }
  }

  content(): string {
    return this.started ? this.prefix + this.appended : '';
  }
}

/** One platform message of the reply, as the platform shows it. */
export interface MessageState {
  id: string | undefined;
  sent: string;
  final: boolean;
  lastWriteAt: number;
  createdAt: number;
}

const freshMessage = (): MessageState => ({ id: undefined, sent: '', final: false, lastWriteAt: 0, createdAt: 0 });

/** Where the current message starts in the reply's text, and what each message was sent. */
export class MessageLedger {
  /** Where the current message's text starts in the reply's content(). */
  private start = 0;
  /** Added before the current message's text (a code fence reopened after a cut). */
  private carry = '';
  msg: MessageState = freshMessage();
  part = 0;
  readonly ids: string[] = [];

  get carryLength(): number {
    return this.carry.length;
  }

  /** The current message's whole text, as it should be shown now. */
  desired(content: string): string {
    return this.carry + content.slice(this.start);
  }

  /** A position in content() as a position in desired(). */
  toDesired(contentAt: number): number {
    return this.carry.length + contentAt - this.start;
  }

  posted(id: string, at: number): void {
    this.msg.id = id;
    this.msg.createdAt = at;
    this.ids.push(id);
  }

  wrote(text: string, final: boolean, at: number): void {
    this.msg.sent = text;
    this.msg.final = final;
    this.msg.lastWriteAt = at;
  }

  /** The current message's text ends after `consumed` chars of desired(); the rest starts with `reopen`. */
  advance(consumed: number, reopen: string): void {
    this.start += consumed - this.carry.length;
    this.carry = reopen;
  }

  nextMessage(): void {
    this.msg = freshMessage();
    this.part++;
  }
}
