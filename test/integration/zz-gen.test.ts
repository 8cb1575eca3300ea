import { writeFileSync } from 'node:fs';
import { it } from 'vitest';
import { measurePath } from '../support/path-coverage.js';
it('gen', async () => {
  const out: Record<string, string[]> = {};
  for (const p of ['slack', 'discord'] as const) out[p] = (await measurePath(p)).files;
  writeFileSync('/tmp/walk.json', JSON.stringify(out));
}, 120_000);
