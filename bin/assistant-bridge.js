#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=4
// The package's command, with the image's memory settings (docs/performance.md, "Memory").
// The TypeScript is compiled to dist/ by `npm ci` (the prepare script);
// when dist/ is missing or older than src/ (a `git pull` since) and the TypeScript compiler is
// installed, it is rebuilt here first, so a stale build never runs silently.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function newest(dir, accept) {
  let mtime = 0;
  if (!existsSync(dir)) return 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) mtime = Math.max(mtime, newest(p, accept));
    else if (accept(entry.name)) mtime = Math.max(mtime, statSync(p).mtimeMs);
  }
  return mtime;
}

const isSource = (n) => n.endsWith('.ts') && !n.endsWith('.test.ts') && !n.endsWith('.d.ts');
const cli = join(root, 'dist', 'cli.js');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
// The incremental build's record: written (or, below, touched) by every build, so it counts as output.
const buildInfo = join(root, 'dist', '.tsbuildinfo');
const isOutput = (n) => n.endsWith('.js') || n === '.tsbuildinfo';
// An installed package (or the container image) has no src/: nothing to compare, dist/ runs.
const stale =
  existsSync(join(root, 'src')) &&
  (!existsSync(cli) || newest(join(root, 'dist'), isOutput) < newest(join(root, 'src'), isSource));
if (stale && existsSync(tsc)) {
  process.stderr.write('assistant-bridge: dist/ is older than src/; building (npm run build)...\n');
  try {
    execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
      cwd: root,
      stdio: ['ignore', 2, 2],
    });
    // Sources with only newer timestamps (a checkout, a merge) make an incremental build write
    // nothing: mark the build as checked, or every later start would build again.
    if (existsSync(buildInfo)) utimesSync(buildInfo, new Date(), new Date());
  } catch {
    // Type errors still emit JavaScript; only a missing dist/cli.js stops the command below.
    process.stderr.write('assistant-bridge: the build reported errors (see above).\n');
  }
} else if (stale && existsSync(cli)) {
  process.stderr.write(
    'assistant-bridge: dist/ is older than src/ and TypeScript is not installed: running the old build.\n',
  );
}

import('../dist/cli.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
    process.stderr.write('assistant-bridge is not built yet: run `npm run build` first.\n');
    process.exit(1);
  }
  throw err;
});
