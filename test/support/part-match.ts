// One step of comparing a long reply's parts with its whole text, shared by the Slack and Discord
// checks: a part must continue the whole where the previous part ended (past whitespace a cut may
// drop), and may end with the fence line that closes a code block the cut went through.

/** Where `body` continues the whole at or after `at`, past whitespace only; -1 when it does not. */
function continues(whole: string, at: number, body: string): number {
  for (let k = at; k <= whole.length; k++) {
    if (whole.startsWith(body, k)) return k;
    if (!/\s/.test(whole[k] ?? '')) return -1;
  }
  return -1;
}

export function skipSpace(s: string, at: number): number {
  let k = at;
  while (k < s.length && /\s/.test(s[k] as string)) k++;
  return k;
}

function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/**
 * Part `i` (its reopened fence line already removed) against the whole from `at`: where the whole
 * goes on after it, or the problem a reader would see. `markers` are the fence markers whose
 * closing line a cut may add at the part's end.
 */
export function continuePart(
  whole: string,
  at: number,
  body: string,
  i: number,
  markers: readonly string[],
): { end: number } | { problem: string } {
  const ends = continuePartEnds(whole, at, body, markers);
  if (ends[0] !== undefined) return { end: ends[0] };
  return { problem: partProblem(whole, at, body, i) };
}

/**
 * Every place the whole may go on after the part, most likely first: the part as it is, then
 * without a closing fence line at its end (one a cut added). A part ending with a real closing
 * line, cut just after it, reads both ways; which one is right shows only in the next part.
 */
export function continuePartEnds(whole: string, at: number, body: string, markers: readonly string[]): number[] {
  const candidates = [body];
  for (const marker of markers)
    if (body.endsWith(`\n${marker}`)) candidates.push(body.slice(0, -marker.length), body.slice(0, -marker.length - 1));
  const ends: number[] = [];
  for (const c of candidates) {
    const found = continues(whole, at, c);
    if (found !== -1 && !ends.includes(found + c.length)) ends.push(found + c.length);
  }
  return ends;
}

function partProblem(whole: string, at: number, body: string, i: number): string {
  const k = skipSpace(whole, at);
  const from = Math.max(0, firstDifference(whole.slice(k), body) - 20);
  return (
    `part ${i} does not continue the text at character ${k + from}: expected ` +
    `${JSON.stringify(whole.slice(k + from, k + from + 60))}, the part has ${JSON.stringify(body.slice(from, from + 60))}`
  );
}

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

/**
 * Problems with `parts` as the exact Markdown `whole` (as written, e.g. Discord or the core's test
 * platform); empty when they spell it. Only what the bridge does by design at a cut is undone: a
 * code block cut in two is closed at the end of one part (a fence line the text does not have) and
 * reopened at the start of the next with its own opening line (info string included), and the
 * whitespace at a cut is not shown. A lost, doubled or changed character fails.
 */
export function exactPartsProblems(parts: readonly string[], whole: string): string[] {
  const fences = fencesOf(whole);
  const failed = new Set<string>();
  // Part `i` from `at` on: [] when the parts from there spell the rest, else the first problem.
  const from = (i: number, at: number): string[] => {
    const part = parts[i];
    if (part === undefined) {
      const rest = whole.slice(at);
      return rest.trim() === ''
        ? []
        : [`the parts end before the text does: ${JSON.stringify(rest.slice(0, 60))} is missing`];
    }
    let body = part;
    const open = i > 0 ? fenceAt(fences, skipSpace(whole, at)) : undefined;
    if (open !== undefined) {
      if (!body.startsWith(`${open.opener}\n`))
        return [`part ${i} continues a code block but does not reopen it with ${JSON.stringify(open.opener)}`];
      body = body.slice(open.opener.length + 1);
    }
    // A code block this part cuts is closed at its end: that fence line is not in the whole.
    const ends = continuePartEnds(whole, at, body, ['```', '~~~']);
    if (ends.length === 0) return [partProblem(whole, at, body, i)];
    let first: string[] | undefined;
    for (const end of ends) {
      const key = `${i + 1}:${end}`;
      if (failed.has(key)) continue;
      const problems = from(i + 1, end);
      if (problems.length === 0) return [];
      failed.add(key);
      first ??= problems;
    }
    return first ?? [`part ${i + 1} onwards: no reading of the parts spells the text`];
  };
  return from(0, 0);
}
