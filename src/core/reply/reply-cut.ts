import { hasText } from './reply-text.js';
import { cutAt, splitOnce } from './split.js';

// How a reply's text is cut into messages, and what the current message's next write is. A pure
// function of the text and what the platform shows: the writer asks it once to decide whether to
// queue a write, and again once the write may leave, so that the write carries the text as it is
// then.

export type WritePlan =
  /**
   * Write `text` to the current message. With `next`, the message ends there (it is final) and
   * the reply goes on in a new one after `consumed` chars of the message's text, reopened by `reopen`.
   */
  | { kind: 'write'; text: string; final: boolean; next?: { consumed: number; reopen: string } }
  /** Only whitespace before a break (no message of its own, which platforms refuse): move past it. */
  | { kind: 'skip'; consumed: number; reopen: string }
  /** Nothing to write until more text comes (or the reply ends). */
  | { kind: 'wait' }
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

  if (hasText(body) && desired !== p.sent && p.fillsSoon !== true)
    return { kind: 'write', text: desired, final: false };
  return wait;
}

const done: WritePlan = { kind: 'done' };
const wait: WritePlan = { kind: 'wait' };
