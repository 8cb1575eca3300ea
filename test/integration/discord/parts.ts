import { fencesBalanced } from '../../../src/core/split.js';
import { continuePart, skipSpace } from '../../support/part-match.js';

// Exact checks on a reply split over several Discord messages (Discord shows Markdown as sent).
//
// The parts joined must spell the expected text exactly. Only what the bridge does by design at a
// cut is undone: a code block cut in two is closed at the end of one part (a fence line the text
// does not have) and reopened at the start of the next with its own opening line (info string
// included), and the whitespace at a cut is not shown. A lost, doubled or changed character,
// whitespace inside a part or a fence line that is not at a cut, fails.

interface Fence {
  /** Index of the opening line's first character. */
  start: number;
  /** The opening line, e.g. "```ts". */
  opener: string;
  /** The closing marker ("```" or "~~~"). */
  marker: string;
  /** Index just past the closing line's marker; the text's length when the block never closes. */
  end: number;
}

function fencesOf(whole: string): Fence[] {
  const fences: Fence[] = [];
  let open: Omit<Fence, 'end'> | undefined;
  let at = 0;
  for (const line of whole.split('\n')) {
    const m = /^\s*(```|~~~)/.exec(line);
    if (m !== null) {
      if (open === undefined) open = { start: at, opener: line, marker: m[1] as string };
      else if (line.trim() === open.marker) {
        fences.push({ ...open, end: at + line.length });
        open = undefined;
      }
    }
    at += line.length + 1;
  }
  if (open !== undefined) fences.push({ ...open, end: whole.length });
  return fences;
}

/** The code block `at` lies inside (past its opening line, before its closing line ends). */
function fenceAt(fences: Fence[], at: number): Fence | undefined {
  return fences.find((f) => at > f.start + f.opener.length && at < f.end);
}

/** Problems with `parts` as the exact text `whole`; empty when they spell it (up to what a cut adds or drops). */
function exactProblems(parts: readonly string[], whole: string): string[] {
  const fences = fencesOf(whole);
  let at = 0;
  for (const [i, part] of parts.entries()) {
    let body = part;
    const open = i > 0 ? fenceAt(fences, skipSpace(whole, at)) : undefined;
    if (open !== undefined) {
      if (!body.startsWith(`${open.opener}\n`))
        return [`part ${i} continues a code block but does not reopen it with ${JSON.stringify(open.opener)}`];
      body = body.slice(open.opener.length + 1);
    }
    // A code block this part cuts is closed at its end: that fence line is not in the whole.
    const step = continuePart(whole, at, body, i, ['```', '~~~']);
    if ('problem' in step) return [step.problem];
    at = step.end;
  }
  const rest = whole.slice(at);
  return rest.trim() === ''
    ? []
    : [`the parts end before the text does: ${JSON.stringify(rest.slice(0, 60))} is missing`];
}

/** Every part fits Discord and has its code fences balanced; the parts spell the expected text exactly. */
export function partsProblems(parts: string[], expected: string): string[] {
  const problems: string[] = [];
  parts.forEach((p, i) => {
    if (p.length > 2000) problems.push(`part ${i} has ${p.length} chars`);
    if (!fencesBalanced(p)) problems.push(`part ${i} has unbalanced fences`);
  });
  return [...problems, ...exactProblems(parts, expected)];
}

/** A write to one of a reply's messages, in the order the fake received them. */
export interface PartWrite {
  method: string;
  messageId?: string;
  content: string | undefined;
  status: number;
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
  for (const [i, w] of writes.entries()) {
    if (w.status >= 300 || w.messageId === undefined || w.content === undefined) continue;
    const id = w.messageId;
    const before = shown.get(id);
    if (w.method === 'POST') order.push(id);
    else if (before === undefined) problems.push(`write ${i} edits a message the reply did not post`);
    else if (id !== order.at(-1))
      problems.push(`write ${i} edits part ${order.indexOf(id)} after a later part was posted`);
    if (before !== undefined) {
      if (w.content === before) problems.push(`write ${i} repeats the text already shown`);
      const kept = before.replace(/\n(```|~~~)$/, '');
      if (!w.content.startsWith(kept.trimEnd()) && !movedOn(writes, i, kept))
        problems.push(`write ${i} takes back text: ${JSON.stringify(kept.slice(-40))} is no longer shown`);
    }
    shown.set(id, w.content);
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
