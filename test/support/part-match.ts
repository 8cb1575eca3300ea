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
  const candidates = [body];
  for (const marker of markers)
    if (body.endsWith(`\n${marker}`)) candidates.push(body.slice(0, -marker.length), body.slice(0, -marker.length - 1));
  for (const c of candidates) {
    const found = continues(whole, at, c);
    if (found !== -1) return { end: found + c.length };
  }
  const k = skipSpace(whole, at);
  const from = Math.max(0, firstDifference(whole.slice(k), body) - 20);
  return {
    problem:
      `part ${i} does not continue the text at character ${k + from}: expected ` +
      `${JSON.stringify(whole.slice(k + from, k + from + 60))}, the part has ${JSON.stringify(body.slice(from, from + 60))}`,
  };
}
