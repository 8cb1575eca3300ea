import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { measurePath, type PathPlatform } from '../support/path-coverage.js';

// docs/architecture.md's measured walk is the code's: one message through the real bridge (a
// child process under V8 precise coverage, background work subtracted) runs code in exactly the
// files the doc lists for its platform. When this fails, the output names the files to add to or
// remove from the doc's `walk <platform>` block (or the change that widened the path).

/** The doc's walk: every file, and those marked "sometimes" (a timer of their own). */
function walkOf(platform: PathPlatform): { all: string[]; always: string[] } {
  const doc = readFileSync('docs/architecture.md', 'utf8');
  const block = new RegExp('```walk ' + platform + '\\n([\\s\\S]*?)```').exec(doc);
  if (!block?.[1]) throw new Error(`docs/architecture.md has no \`walk ${platform}\` block`);
  const lines = block[1]
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('src/'));
  const file = (l: string) => l.split(/\s/)[0] ?? '';
  return { all: lines.map(file), always: lines.filter((l) => !l.includes('(sometimes')).map(file) };
}

describe('the measured walk', () => {
  for (const platform of ['slack', 'discord', 'playground'] as const) {
    it(`one ${platform} message runs code in the files docs/architecture.md lists`, async () => {
      const { files } = await measurePath(platform);
      const walk = walkOf(platform);
      const missing = files.filter((f) => !walk.all.includes(f));
      const extra = walk.always.filter((f) => !files.includes(f));
      expect({ missingFromDoc: missing, notRunByCode: extra }).toEqual({ missingFromDoc: [], notRunByCode: [] });
      console.log(`${platform}: ${files.length} files`);
    }, 90_000);
  }
});
