import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { measurePath, type PathMeasurement } from '../test/support/path-coverage.js';
import { rewriteWalk } from './walk-doc.js';

// `npm run bench -- --path-only`: the source files one message runs, per platform and in the
// playground (issue 30's measure; test/integration/path-walk.test.ts holds docs/architecture.md's
// walk to it).

export async function runPathSection(log: (line: string) => void, writeWalk = false): Promise<void> {
  const results: PathMeasurement[] = [];
  for (const platform of ['slack', 'discord', 'playground'] as const) {
    const m = await measurePath(platform);
    results.push(m);
    const byLayer = new Map<string, number>();
    for (const f of m.files) {
      const layer = f.split('/').slice(1, -1).join('/') || '(top)';
      byLayer.set(layer, (byLayer.get(layer) ?? 0) + 1);
    }
    log(`${platform}: ${m.files.length} files in ${m.windowMs} ms`);
    for (const [layer, n] of [...byLayer].sort()) log(`  ${layer.padEnd(24)} ${n}`);
  }
  const dir = join('bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${new Date().toISOString().slice(0, 10)}-path.json`);
  writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), results }, null, 2)}\n`);
  log(`written to ${file}`);
  if (!writeWalk) return;
  const docFile = join('docs', 'architecture.md');
  let doc = readFileSync(docFile, 'utf8');
  for (const m of results) doc = rewriteWalk(doc, m.platform, m.files);
  writeFileSync(docFile, doc);
  log(`walk blocks rewritten in ${docFile}`);
}
