import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// SIGTERM under load is measured by `npm run stress:sigterm` (20 runs of the replica SIGTERM tests
// under two busy loops: minutes, so not part of every bench run). The bench shows its newest
// result, with its date, so one report holds every figure.

interface StressDoc {
  date: string;
  summary: string;
  figures?: string[];
}

/** One line about the newest stress result in `dir`, or a hint to run it. */
export function sigtermStressLine(dir = join('bench', 'results')): string {
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('-sigterm-stress.json'));
  } catch {
    // No results folder yet: the hint below.
  }
  const newest = files.sort().at(-1);
  if (newest === undefined) return 'SIGTERM under load: not measured yet (npm run stress:sigterm)';
  const doc = JSON.parse(readFileSync(join(dir, newest), 'utf8')) as StressDoc;
  const ms = (doc.figures ?? []).map((f) => Number(/exit in (\d+) ms/.exec(f)?.[1])).filter(Number.isFinite);
  const range = ms.length > 0 ? `; SIGTERM → exit ${Math.min(...ms)}–${Math.max(...ms)} ms` : '';
  return `SIGTERM under load (${doc.date.slice(0, 10)}, npm run stress:sigterm): ${doc.summary}${range}`;
}
