import { fencesBalanced } from '../../../src/core/split.js';

// Checks on a reply split over several Discord messages.

/** Text without fence lines and whitespace: what must survive splitting unchanged, in order. */
export function essence(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^\s*(```|~~~)/.test(line))
    .join('')
    .replace(/\s+/g, '');
}

/** Every part fits Discord and has its code fences balanced; the parts hold the whole text. */
export function partsProblems(parts: string[], expected: string): string[] {
  const problems: string[] = [];
  parts.forEach((p, i) => {
    if (p.length > 2000) problems.push(`part ${i} has ${p.length} chars`);
    if (!fencesBalanced(p)) problems.push(`part ${i} has unbalanced fences`);
  });
  if (essence(parts.join('\n')) !== essence(expected)) problems.push('the parts do not hold the expected text');
  return problems;
}
