import { type Fence, findFences } from './fences.js';

// A reply's split into platform-sized messages (its code fences: fences.ts; its tables:
// table-parser.ts). A cut prefers, in order: a paragraph break, a line break, the end of a sentence, a space; else a
// hard cut at a code-point boundary. It never falls inside a surrogate pair, inside a Markdown
// link `[..](..)`, or on a fence's opening or closing line. A cut inside a fenced code block (```
// or ~~~) closes the fence at the end of the part and reopens it, with the same info string, at
// the start of the next one. Reconstruction is exact: each part is `reopen + body + close`, where
// `reopen` and `close` are the added fence lines, and the bodies joined are the input (joinParts).

export interface SplitPart {
  /** The message text: reopen + body + close. */
  text: string;
  /** Added at the start to reopen the fence the previous part closed ('' if none). */
  reopen: string;
  /** Added at the end to close a fence this part cuts ('' if none). */
  close: string;
}

export interface Cut {
  /** Characters of the input that go into this part. */
  consumed: number;
  /** The part's text: input.slice(0, consumed) + close. At most `max` long. */
  head: string;
  close: string;
  /** What the next part starts with before input.slice(consumed) ('' or the fence's opening line). */
  reopen: string;
}

/**
 * Where a cut may fall, tried in turn: the last tenth of the limit first, so that a message that
 * streamed up to the limit keeps (nearly) all it showed, then from 30% on, then anywhere. Within
 * each, a paragraph break beats a line break, a sentence end and a space.
 */
const CUT_FLOORS = [0.9, 0.3] as const;
/** How far past the limit a cut looks (a link or fence line crossing it); bounds a cut's work. */
const LOOKAHEAD = 2048;
const BOUNDARY_KINDS: readonly RegExp[] = [/\n[ \t]*\n/g, /\n/g, /[.!?]["')\]]*[ \t]+/g, /[ \t]+/g];

/** What splitting cost, for tests that prove it linear. */
export interface SplitWork {
  /** Characters read by the passes over the text. */
  scanned: number;
  /** Candidate cuts tried. */
  tries: number;
}

/** Fences whose reopen/close lines would eat more than this share of a part are not reopened. */
const MAX_FENCE_OVERHEAD = 0.5;

/** A cut at c falls inside a surrogate pair: a high one (D800–DBFF) before, a low one (DC00–DFFF) at c. */
const inPair = (t: string, c: number) => t.charCodeAt(c - 1) >> 10 === 0x36 && t.charCodeAt(c) >> 10 === 0x37;

/**
 * The first cut of `text` for parts of at most `max` characters, or undefined when it fits.
 * `minCut`: the cut must take more than this many characters (a reopened fence line at the start
 * of `text` must not be all a part holds). `maxCut`: nor more than this many (a note appended to
 * the text is never split; the cut falls before it at the latest).
 */
export function splitOnce(
  text: string,
  max: number,
  minCut = 0,
  maxCut = Number.POSITIVE_INFINITY,
  work?: SplitWork,
): Cut | undefined {
  if (text.length <= max) return undefined;
  if (max < 1) throw new RangeError('max must be at least 1');
  // Scan to the end of the line holding the limit, so that a closing line crossing it is seen;
  // but never more than LOOKAHEAD past the limit, so that a cut costs the same in a 40 k line.
  const scanLimit = Math.min(text.length, max + LOOKAHEAD);
  const nlAfter = text.slice(max, scanLimit).indexOf('\n');
  const scanned = text.slice(0, nlAfter === -1 ? scanLimit : max + nlAfter + 1);
  const fences = findFences(scanned);
  const links = linkSpans(text, max);
  if (work) work.scanned += scanned.length + 2 * Math.min(text.length, max + LOOKAHEAD);
  // Both lists are in order and do not overlap: the one that may hold c is found by bisection.
  const fenceAt = (c: number) => {
    const f = fences[lastBefore(fences.length, (i) => (fences[i] as Fence).openStart < c)];
    return f !== undefined && c <= f.closeEnd ? f : undefined;
  };
  const inLink = (c: number) => {
    const l = links[lastBefore(links.length, (i) => (links[i] as [number, number])[0] < c)];
    return l !== undefined && c < l[1];
  };

  /** The cut at c, if it is allowed and fits. */
  const tryCut = (c: number, fenceAware = true): Cut | undefined => {
    if (work) work.tries++;
    if (c <= minCut || c > text.length || c > maxCut) return undefined;
    if (inPair(text, c)) return undefined;
    if (inLink(c)) return undefined;
    const f = fenceAt(c);
    if (f !== undefined) {
      if (c < f.contentStart) return undefined; // on the opening line
      if (c > f.closeStart && c < f.closeEnd) return undefined; // on the closing line
      // Right after the opening line or right before the closing one: an empty code block would
      // be left behind; the line boundary on the other side of that fence line is better.
      if (c === f.contentStart || (c === f.closeStart && f.closeEnd > f.closeStart)) return undefined;
      if (c <= f.closeStart) {
        const close = `${text[c - 1] === '\n' ? '' : '\n'}${f.marker}`;
        const reopen = `${f.opener}\n`;
        if (fenceAware) {
          // A fence line too long to repeat in every part: no cut inside that block, but the
          // last-resort cut below may still be needed.
          if ((close.length + reopen.length) / max > MAX_FENCE_OVERHEAD) return undefined;
          if (c + close.length > max) return undefined;
          return { consumed: c, head: text.slice(0, c) + close, close, reopen };
        }
      }
    }
    if (c > max) return undefined;
    return { consumed: c, head: text.slice(0, c), close: '', reopen: '' };
  };

  // Everything before the note fits: cut right before it (the note starts a paragraph).
  if (maxCut <= max) {
    const atNote = tryCut(maxCut);
    if (atNote !== undefined) return atNote;
  }
  const window = text.slice(0, Math.min(max, maxCut) + 1);
  if (work) work.scanned += BOUNDARY_KINDS.length * window.length;
  const endsByKind = BOUNDARY_KINDS.map((re) => Array.from(window.matchAll(re), (m) => m.index + m[0].length));
  for (const floor of [...CUT_FLOORS.map((share) => Math.max(minCut, Math.floor(max * share))), minCut]) {
    for (const ends of endsByKind) {
      for (let i = ends.length - 1; i >= 0; i--) {
        const c = ends[i] as number;
        if (c <= floor) break;
        const cut = tryCut(c);
        if (cut !== undefined) return cut;
      }
    }
  }
  // Hard cut: the longest allowed prefix.
  for (let c = Math.min(max, maxCut); c > minCut; c--) {
    const cut = tryCut(c);
    if (cut !== undefined) return cut;
  }
  // Nothing allowed (a link or fence line longer than a part): cut anyway, but never a surrogate pair.
  let c = max;
  if (c > 1 && inPair(text, c)) c--;
  return tryCut(c, false) ?? { consumed: c, head: text.slice(0, c), close: '', reopen: '' };
}

/** The largest i < n with below(i) true, for a predicate true on a prefix of 0..n-1; -1 if none. */
function lastBefore(n: number, below: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (below(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/**
 * Split a whole text into parts of at most `max` characters. Each cut sees only the next
 * `max + LOOKAHEAD` characters, so the whole split is linear in the text.
 */
export function splitText(text: string, max: number, work?: SplitWork): SplitPart[] {
  const parts: SplitPart[] = [];
  let carry = '';
  let rest = text;
  for (let guard = 0; guard <= text.length + 1; guard++) {
    const current = carry + rest.slice(0, max + LOOKAHEAD + 1);
    const cut = splitOnce(current, max, carry.length, undefined, work);
    if (cut === undefined) {
      parts.push({ text: current, reopen: carry, close: '' });
      return parts;
    }
    parts.push({ text: cut.head, reopen: carry, close: cut.close });
    rest = rest.slice(cut.consumed - carry.length);
    carry = cut.reopen;
  }
  throw new Error('splitText made no progress');
}

/** The input of splitText: each part without its added fence lines, joined. */
export function joinParts(parts: readonly SplitPart[]): string {
  return parts.map((p) => p.text.slice(p.reopen.length, p.text.length - p.close.length)).join('');
}

/**
 * [start, end) of each Markdown link `[label](target)` (no `]` or line end in the label, no `)` or
 * line end in the target) that starts within the first `max` characters; what LINK_RE finds with
 * matchAll, in one pass (the regex rescans the rest of the line from every unclosed `[`).
 */
function linkSpans(text: string, max: number): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  // Look a little past the limit so that a link crossing it is seen whole.
  const end = Math.min(text.length, max + LOOKAHEAD);
  // Where the next `]` (resp. `)`) or line end is, from a position on: found once, reused.
  let closeAt = -1;
  let parenAt = -1;
  const nextOf = (from: number, ch: string): number => {
    for (let j = from; j < end; j++) {
      const c = text[j];
      if (c === ch || c === '\n') return j;
    }
    return end;
  };
  for (let i = 0; i < end && i <= max; i++) {
    if (text[i] !== '[') continue;
    if (closeAt <= i) closeAt = nextOf(i + 1, ']');
    if (closeAt + 1 >= end || text[closeAt] !== ']' || text[closeAt + 1] !== '(') continue;
    if (parenAt <= closeAt + 1) parenAt = nextOf(closeAt + 2, ')');
    if (parenAt >= end || text[parenAt] !== ')') continue;
    spans.push([i, parenAt + 1]);
    i = parenAt;
  }
  return spans;
}
