// `npm run bench -- --path-only --write-walk`: rewrites docs/architecture.md's ```walk <platform>```
// blocks from a measurement, so the doc follows the code after a change that moves files (the
// path-walk test then holds them). A file the old block marked "(sometimes: …)" keeps its note,
// and stays listed when this measurement did not see it (its work is on a timer of its own); a
// file newly seen on a timer of its own needs its note written by hand.

import { existsSync } from 'node:fs';

const SOMETIMES = '(sometimes';

/** The doc with `platform`'s walk block (and the count in the line before it) set to `files`. */
export function rewriteWalk(doc: string, platform: string, files: readonly string[]): string {
  const open = '```walk ' + platform + '\n';
  const start = doc.indexOf(open);
  if (start < 0) throw new Error(`docs/architecture.md has no \`walk ${platform}\` block`);
  const end = doc.indexOf('```', start + open.length);
  const old = doc
    .slice(start + open.length, end)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('src/'));
  const notes = new Map<string, string>();
  for (const line of old) {
    const at = line.indexOf(SOMETIMES);
    // A file gone from src (moved, merged) takes its note with it.
    if (at > 0 && existsSync(line.slice(0, at).trim())) notes.set(line.slice(0, at).trim(), line.slice(at));
  }
  const all = [...new Set([...files, ...notes.keys()])].sort();
  const lines = all.map((f) => (notes.has(f) ? `${f}  ${notes.get(f)}` : f));
  const always = all.filter((f) => !notes.has(f)).length;
  const block = `${open}${lines.join('\n')}\n`;
  // The count sits in the sentence just before the block: "…: 77 files, 4 more sometimes."
  const before = doc.slice(0, start);
  const count = /(\d+) files(, (\d+) more sometimes)?\./g;
  let last: RegExpExecArray | null = null;
  for (let m = count.exec(before); m; m = count.exec(before)) last = m;
  const counted = notes.size > 0 ? `${always} files, ${notes.size} more sometimes.` : `${always} files.`;
  const head =
    last && start - last.index < 600
      ? before.slice(0, last.index) + counted + before.slice(last.index + last[0].length)
      : before;
  return head + block + doc.slice(end);
}
