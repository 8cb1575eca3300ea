import type { CheckRow } from './types.js';

// The doctor's output: an aligned plain-text table (no colours, so it reads the same in a
// terminal, a CI log and a pasted bug report), then a one-line summary.

const HEAD = { check: 'CHECK', status: 'STATUS', detail: 'DETAIL', hint: 'FIX' };

export function renderTable(rows: readonly CheckRow[]): string {
  const lines = rows.map((r) => ({ ...r, detail: r.detail.split('\n'), hint: r.hint ?? '' }));
  const w = {
    check: Math.max(HEAD.check.length, ...lines.map((r) => r.check.length)),
    status: Math.max(HEAD.status.length, ...lines.map((r) => r.status.length)),
    // Only rows with a hint are padded, so a long URL in a passing row does not push FIX away.
    detail: Math.max(HEAD.detail.length, ...lines.filter((r) => r.hint !== '').map((r) => r.detail[0]?.length ?? 0)),
  };
  const line = (c: string, s: string, d: string, h: string) =>
    `${c.padEnd(w.check)}  ${s.padEnd(w.status)}  ${h === '' ? d : `${d.padEnd(w.detail)}  ${h}`}`.trimEnd();

  const out = [line(HEAD.check, HEAD.status, HEAD.detail, HEAD.hint)];
  out.push(line('-'.repeat(w.check), '-'.repeat(w.status), '-'.repeat(w.detail), '---'));
  for (const r of lines) {
    const [first = '', ...rest] = r.detail;
    out.push(line(r.check, r.status, first, r.hint));
    for (const more of rest) out.push(line('', '', more, ''));
  }
  return `${out.join('\n')}\n`;
}

export function summary(rows: readonly CheckRow[]): string {
  const count = (s: CheckRow['status']) => rows.filter((r) => r.status === s).length;
  const failed = count('FAIL');
  const warned = count('WARN');
  return `${count('ok')} ok, ${failed} failed, ${count('skip')} skipped${warned > 0 ? `, ${warned} warned` : ''}${failed > 0 ? ': fix the FAIL rows above' : ''}\n`;
}
