import { fencesBalanced } from '../../../src/core/reply/fences.js';
import { exactPartsProblems } from '../../support/part-match.js';

// Exact checks on a reply split over several Discord messages (Discord shows Markdown as sent).
//
// The parts joined must spell the expected text exactly. Only what the bridge does by design at a
// cut is undone: a code block cut in two is closed at the end of one part (a fence line the text
// does not have) and reopened at the start of the next with its own opening line (info string
// included), and the whitespace at a cut is not shown. A lost, doubled or changed character,
// whitespace inside a part or a fence line that is not at a cut, fails.

/** Every part fits Discord and has its code fences balanced; the parts spell the expected text exactly. */
export function partsProblems(parts: string[], expected: string): string[] {
  const problems: string[] = [];
  parts.forEach((p, i) => {
    if (p.length > 2000) problems.push(`part ${i} has ${p.length} chars`);
    if (!fencesBalanced(p)) problems.push(`part ${i} has unbalanced fences`);
  });
  return [...problems, ...exactPartsProblems(parts, expected)];
}

/** A write to one of a reply's messages, in the order the fake received them. */
export interface PartWrite {
  method: string;
  messageId?: string;
  content: string | undefined;
  status: number;
  /** Its answer was lost after it took effect (the fakes' chaos): a repeat of it follows. */
  lost?: true;
}

/**
 * What a reader of a streamed reply must never see, whatever the timing: a write that changes
 * nothing (budget spent for no one), an edit that takes text back (apart from the fence line
 * closing a code block the stream is inside), or a write going back to a part once the next part
 * has been posted. The number of edits, by contrast, follows how long the stream ran.
 */
export function writeSequenceProblems(writes: readonly PartWrite[]): string[] {
  const problems: string[] = [];
  const shown = new Map<string, string>();
  const order: string[] = [];
  const lastLost = new Map<string, boolean>();
  for (const [i, w] of writes.entries()) {
    if (w.status >= 300 || w.messageId === undefined || w.content === undefined) continue;
    const id = w.messageId;
    const before = shown.get(id);
    if (w.method === 'POST') order.push(id);
    else if (before === undefined) problems.push(`write ${i} edits a message the reply did not post`);
    else if (id !== order.at(-1))
      problems.push(`write ${i} edits part ${order.indexOf(id)} after a later part was posted`);
    if (before !== undefined) {
      // A write whose answer was lost (the fakes' chaos) is repeated: that repeat changes nothing.
      if (w.content === before && lastLost.get(id) !== true) problems.push(`write ${i} repeats the text already shown`);
      const kept = before.replace(/\n(```|~~~)$/, '');
      if (!w.content.startsWith(kept.trimEnd()) && !movedOn(writes, i, kept))
        problems.push(`write ${i} takes back text: ${JSON.stringify(kept.slice(-40))} is no longer shown`);
    }
    shown.set(id, w.content);
    lastLost.set(id, w.lost === true);
  }
  return problems;
}

/**
 * A full part's cut may move back to a better boundary (a paragraph) once the part is full: the
 * text that leaves it must then open the next part, posted next (after a reopened fence line).
 * Text that leaves a part and shows up nowhere is still taken back.
 */
function movedOn(writes: readonly PartWrite[], i: number, kept: string): boolean {
  const now = writes[i]?.content;
  if (now === undefined) return false;
  const head = now.replace(/\n(```|~~~)$/, '').trimEnd();
  if (!kept.startsWith(head)) return false;
  const left = kept.slice(head.length).trim();
  const next = writes.slice(i + 1).find((x) => x.method === 'POST' && x.status < 300 && x.content !== undefined);
  if (next?.content === undefined) return false;
  const opening = next.content.replace(/^(```|~~~)[^\n]*\n/, '').trimStart();
  return opening.startsWith(left);
}
