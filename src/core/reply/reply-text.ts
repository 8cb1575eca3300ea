import { fenceCloser, openFence } from './fences.js';
import { type Cut, splitOnce } from './split.js';

// A reply's text model: what text the reply owes the platform (the reply as composed so far:
// prefix, upstream text, the note it ended with; and, per message, what the platform already
// shows), and from both what the current message's next write is (planWrite). The writer reads
// them at the moment a write leaves, so a write always carries the newest text.

/** How a reply ends (ReplyWriter.finish). */
export interface FinishOptions {
  /** Appended to the text when the reply has content (e.g. the interruption note). */
  note?: string;
  /** The whole reply when it has no content (e.g. an error message). */
  replacement?: string;
  /** The last write shows thumbs up/down (WriteOptions.feedback). */
  feedback?: boolean;
  /**
   * Put after the text and before the note (an agent's sources, files it names); with no text,
   * it is the reply when `replacement` is absent, else after it.
   */
  appendix?: string;
  /** The reply when it has no text, in place of `replacement` (images the sink shows, named). */
  bare?: string;
}

export const hasText = (s: string): boolean => /\S/.test(s);

/** The reply as composed: prefix + upstream text (+ a note once it ended). */
export class ReplyText {
  private appended = '';
  private prefix = '';
  private started = false;
  private endedFlag = false;
  /** Where the note appended by end() starts in content(): a cut never falls inside it. */
  private noteStart: number | undefined;
  /** Set by end(): the reply's last write shows feedback buttons. */
  feedback = false;

  constructor(private readonly prefixOf?: () => string) {}

  get ended(): boolean {
    return this.endedFlag;
  }

  get noteAt(): number | undefined {
    return this.noteStart;
  }

  /** How fast the text grows (PlanLimits.growth), from the times given to append. */
  readonly pace = new TextGrowth();

  /** False when nothing changed (empty delta, or the reply already ended). `at`: now, for the pace. */
  append(delta: string, at?: number): boolean {
    if (this.endedFlag || delta === '') return false;
    this.appended += delta;
    if (at !== undefined) this.pace.record(at, this.appended.length);
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
    this.feedback = opts.feedback === true;
    const appendix = opts.appendix !== undefined && hasText(opts.appendix) ? opts.appendix : undefined;
    if (this.started) {
      // A code block the cut left open is closed first, so that neither the appendix nor the note
      // is shown as code.
      if (appendix !== undefined) this.appended += fenceCloser(this.content()) + appendix;
      if (opts.note !== undefined) {
        this.appended += fenceCloser(this.content());
        this.noteStart = this.content().length;
        this.appended += opts.note;
      }
      return;
    }
    const text = opts.bare ?? opts.replacement ?? opts.note?.trimStart();
    if (text !== undefined && hasText(text)) {
      this.appended = text;
      this.started = true;
    }
    if (appendix !== undefined) {
      this.appended = this.started ? this.appended + appendix : appendix.trimStart();
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
  /** The version of the agent's steps the message shows (AgentWork.version); 0: none. */
  steps: number;
}

const freshMessage = (): MessageState => ({
  id: undefined,
  sent: '',
  final: false,
  lastWriteAt: 0,
  createdAt: 0,
  steps: 0,
});

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

  wrote(text: string, final: boolean, at: number, steps = 0): void {
    this.msg.sent = text;
    this.msg.final = final;
    this.msg.lastWriteAt = at;
    this.msg.steps = final ? 0 : steps;
  }

  /** The current message's text ends after `consumed` chars of desired(); the rest starts with `reopen`. */
  advance(consumed: number, reopen: string): void {
    this.start += consumed - this.carry.length;
    this.carry = reopen;
  }

  /** When the current message must be finished, one edit interval before the sink's maximum age. */
  rolloverAt(maxAgeMs: number | undefined, editIntervalMs: number): number | undefined {
    if (maxAgeMs === undefined || this.msg.id === undefined || this.msg.final) return undefined;
    return this.msg.createdAt + Math.max(0, maxAgeMs - editIntervalMs);
  }

  nextMessage(): void {
    this.msg = freshMessage();
    this.part++;
  }
}

// How a reply's text is cut into messages, and what the current message's next write is: a pure
// function of the text and what the platform shows. The writer asks it once to decide whether to
// queue a write, and again once the write may leave.

export type WritePlan =
  /**
   * Write `text` to the current message. With `next`, the message ends there (it is final) and
   * the reply goes on in a new one after `consumed` chars of the message's text, reopened by `reopen`.
   */
  | { kind: 'write'; text: string; final: boolean; next?: { consumed: number; reopen: string } }
  /** Only whitespace before a break (no message of its own, which platforms refuse): move past it. */
  | { kind: 'skip'; consumed: number; reopen: string }
  /**
   * Nothing to write until more text comes (or the reply ends). `paced`: there is text to show,
   * held back because the message is about to fill at the text's pace (PlanInput.fillsSoon); the
   * pace is only a guess, so the writer looks again after an interval (an upstream that goes
   * quiet, say while an agent's tool runs, would otherwise leave that text unseen).
   */
  | { kind: 'wait'; paced?: true }
  /** The reply ended and the platform shows all of it. */
  | { kind: 'done' };

export interface PlanInput {
  /** The current message's whole text as it should be shown (carry + its part of the reply). */
  desired: string;
  /** Length of the reopened fence line at the start of `desired` ('' → 0). */
  carryLength: number;
  /** Characters one message may hold now. */
  limit: number;
  /** Where the closing note starts in `desired`, if the reply has one: a cut may fall there. */
  noteCut: number | undefined;
  /** The current message was posted. */
  posted: boolean;
  /** The current message had its final write. */
  messageFinal: boolean;
  /** What the current message shows. */
  sent: string;
  /** The upstream ended: every write is a final one. */
  ending: boolean;
  /** The sink needs a final write even when the text did not change. */
  needsFinalWrite: boolean;
  /** The current message reached its maximum age: finish it, continue in a new one. */
  rolloverDue: boolean;
  /**
   * At the text's pace the current message will be full within an edit interval (a continuation:
   * two) and the reply already shows something: an intermediate write of it would soon be
   * followed by its final one (the cut), so it waits for the cut or the end instead. A long fast
   * reply then costs a write per part plus the first part's final, which a 5-per-5-s bucket pays
   * without making the last part wait a window.
   */
  fillsSoon?: boolean;
}

export function planWrite(p: PlanInput): WritePlan {
  const { desired, carryLength } = p;
  const body = desired.slice(carryLength);

  if (desired.length > p.limit) {
    // A part must hold some text besides whitespace: platforms refuse a message (or an edit)
    // that is only whitespace, so a cut may not leave one behind.
    const lead = /^\s*/.exec(body)?.[0].length ?? 0;
    const minCut = carryLength + lead;
    const noteCut = p.noteCut !== undefined && p.noteCut > minCut ? p.noteCut : undefined;
    const cut = splitOnce(desired, p.limit, minCut, noteCut) ?? cutAt(desired, p.limit);
    if (!p.posted && !hasText(cut.head)) return { kind: 'skip', consumed: cut.consumed, reopen: cut.reopen };
    return { kind: 'write', text: cut.head, final: true, next: { consumed: cut.consumed, reopen: cut.reopen } };
  }

  if (p.ending) {
    if (!hasText(body)) return p.posted && !p.messageFinal ? { kind: 'write', text: desired, final: true } : done;
    // The last edit already shows the whole text: a final write would change nothing a user
    // sees, unless the sink needs the signal itself.
    const unchanged = desired === p.sent;
    if (unchanged && (p.messageFinal || !p.needsFinalWrite)) return done;
    return { kind: 'write', text: desired, final: true };
  }

  if (p.rolloverDue) {
    const cut = cutAt(desired, desired.length, carryLength);
    return { kind: 'write', text: cut.head, final: true, next: { consumed: cut.consumed, reopen: cut.reopen } };
  }

  if (hasText(body) && desired !== p.sent)
    return p.fillsSoon === true ? paced : { kind: 'write', text: desired, final: false };
  return wait;
}

const done: WritePlan = { kind: 'done' };
const wait: WritePlan = { kind: 'wait' };
const paced: WritePlan = { kind: 'wait', paced: true };

/** What the next write depends on besides the text: the sink's size and needs, the message's age. */
export interface PlanLimits {
  maxChars: number;
  /** Room kept free in every message while the reply streams (for a note appended later). */
  reserveChars: number;
  needsFinalWrite: boolean;
  /** The current message reached its maximum age. */
  rolloverDue: boolean;
  /** Characters the text would gain over the next edit interval at its recent pace (TextGrowth). */
  growth: number;
}

/** The current message's next write, from the reply's text and what its messages show now. */
export function nextWrite(text: ReplyText, ledger: MessageLedger, l: PlanLimits): WritePlan {
  const desired = ledger.desired(text.content());
  const { ended: ending, noteAt } = text;
  // While streaming, keep room for a note, and for closing a code block left open before it:
  // the final write may use both, and the note then never has to be split off on its own.
  const reserve = ending ? 0 : l.reserveChars + fenceCloser(desired).length;
  const { msg } = ledger;
  const limit = Math.max(1, l.maxChars - reserve);
  // The reply's first post is never held back (first text goes at once). Over one interval for
  // the first message; over two for a continuation, which right after a cut holds little text at
  // a pace that already filled a message (measured: bench --discord-long-runs).
  const horizon = ledger.part > 0 ? 2 : 1;
  return planWrite({
    desired,
    carryLength: ledger.carryLength,
    limit,
    noteCut: noteAt === undefined ? undefined : ledger.toDesired(noteAt),
    posted: msg.id !== undefined,
    messageFinal: msg.final,
    sent: msg.sent,
    ending,
    needsFinalWrite: l.needsFinalWrite,
    rolloverDue: !ending && l.rolloverDue,
    fillsSoon: !ending && ledger.ids.length > 0 && desired.length + horizon * l.growth > limit,
  });
}

/**
 * Cut the text at `at` (a message finished early, e.g. a message grown too old), or at the start
 * of its line when that line may be a fence line; when the cut falls inside a fence, close it in
 * this part and reopen it in the next. `minCut`: the cut must take more than this many characters.
 */
export function cutAt(text: string, at: number, minCut = 0): Cut {
  // A line that starts with a fence character may be a fence line still arriving (``` a
  // character at a time): cut before it rather than inside it, when that leaves some text.
  let c = at;
  const lineStart = text.lastIndexOf('\n', c - 1) + 1;
  if (lineStart < c && /^ {0,3}[`~]/.test(text.slice(lineStart, c)) && /\S/.test(text.slice(minCut, lineStart)))
    c = lineStart;
  const head = text.slice(0, c);
  const f = openFence(head);
  const close = fenceCloser(head, f);
  return { consumed: c, head: head + close, close, reopen: f === undefined ? '' : `${f.opener}\n` };
}

// How fast a reply's text grows: the characters it gained over the last interval (early on,
// what it gained so far, scaled up to one interval). The writer asks it whether the current
// message will be full before its next write could leave (`PlanInput.fillsSoon`).

/** Below this much history an estimate is noise (one chunk): no growth is assumed. */
const MIN_SPAN_MS = 100;

export class TextGrowth {
  /** (time, content length) at each append, oldest first; one sample older than the interval kept. */
  private samples: { at: number; length: number }[] = [];

  record(at: number, length: number): void {
    this.samples.push({ at, length });
  }

  /** Characters the text would gain over the next `intervalMs` at its pace over the last one. */
  perInterval(now: number, intervalMs: number): number {
    const from = now - intervalMs;
    // Keep the last sample at or before `from` as the base, drop the older ones.
    let drop = 0;
    while (drop + 1 < this.samples.length && (this.samples[drop + 1] as { at: number }).at <= from) drop++;
    if (drop > 0) this.samples.splice(0, drop);
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (first === undefined || last === undefined) return 0;
    const gained = last.length - first.length;
    const span = now - first.at;
    if (span >= intervalMs) return gained;
    return span < MIN_SPAN_MS ? 0 : (gained * intervalMs) / span;
  }
}
