// Comparing what the platform shows with what the upstream sent, and small statistics.

const OPENER_RE = /^ {0,3}(`{3,}|~{3,})[^\n]*\n/;

/**
 * Joins the parts of a split reply back into one text: where a part was cut inside a code
 * block the splitter closed the fence at its end and reopened it at the start of the next part;
 * those added lines are removed again, but only where that keeps the result a prefix of
 * `expected` (a fence that really ends and starts there stays).
 */
export function joinSplit(parts: readonly string[], expected: string): string {
  let acc = parts[0] ?? '';
  for (const next of parts.slice(1)) {
    if (expected.startsWith(acc + next)) {
      acc += next;
      continue;
    }
    // A cut at whitespace leaves that whitespace out of both messages.
    const gap = /^\s+/.exec(expected.slice(acc.length))?.[0];
    if (gap !== undefined && expected.startsWith(acc + gap + next.trimStart())) {
      acc += gap + next.trimStart();
      continue;
    }
    const opener = OPENER_RE.exec(next);
    let joined: string | undefined;
    if (opener) {
      const marker = opener[1] ?? '```';
      const body = next.slice(opener[0].length);
      for (const close of [`\n${marker}`, marker]) {
        const candidate = acc.endsWith(close) ? acc.slice(0, acc.length - close.length) + body : undefined;
        // The part may end with a closer of its own, added where the next cut fell in a block.
        if (
          candidate !== undefined &&
          (expected.startsWith(candidate) || expected.startsWith(withoutCloser(candidate)))
        ) {
          joined = candidate;
          break;
        }
      }
    }
    acc = joined ?? acc + next;
  }
  return acc;
}

const withoutCloser = (text: string) => text.replace(/\n? {0,3}(`{3,}|~{3,})$/, '');

/** Whitespace-insensitive form, for a fallback comparison. */
export function squash(s: string): string {
  return s.replace(/\s+/g, '');
}

export function percentile(values: readonly number[], p: number): number | null {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const idx = Math.min(v.length - 1, Math.max(0, Math.ceil((p / 100) * v.length) - 1));
  return v[idx] ?? null;
}

export function round(x: number | null | undefined, digits = 1): number | null {
  if (x === null || x === undefined || !Number.isFinite(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
