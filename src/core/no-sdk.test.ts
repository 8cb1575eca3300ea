import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The core is platform-neutral: it must not import a platform SDK, the HTTP client or the database
// driver. This reads the sources (not the compiled graph) so that a type-only import fails too.

const coreDir = dirname(fileURLToPath(import.meta.url));
const FORBIDDEN = [/^@slack\//, /^discord\.js$/, /^@discordjs\//, /^undici$/, /^better-sqlite3$/, /^(node:)?https?$/];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (/\.(ts|mts|js|mjs)$/.test(name) && !/\.test\.(ts|js)$/.test(name)) out.push(p);
  }
  return out;
}

function importedModules(source: string): string[] {
  const specs: string[] = [];
  const patterns = [
    /\bimport\s+(?:type\s+)?(?:[\w*{}\s,]+\s+from\s+)?['"]([^'"]+)['"]/g,
    /\bexport\s+(?:type\s+)?[\w*{}\s,]+\s+from\s+['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of source.matchAll(re)) if (m[1] !== undefined) specs.push(m[1]);
  return specs;
}

describe('core imports no SDK', () => {
  it('finds the core sources', () => {
    expect(sourceFiles(coreDir).length).toBeGreaterThan(3);
  });

  it('no core file imports a platform SDK, undici, better-sqlite3 or node:http', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(coreDir)) {
      for (const spec of importedModules(readFileSync(file, 'utf8'))) {
        if (FORBIDDEN.some((re) => re.test(spec))) offenders.push(`${relative(coreDir, file)} imports ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the import scanner catches the forms it must catch', () => {
    const src = `import { App } from '@slack/bolt';\nimport type { Client } from 'discord.js';\nexport * from "undici";\nconst d = await import('better-sqlite3');\nimport 'node:http';`;
    expect(importedModules(src)).toEqual(['@slack/bolt', 'discord.js', 'node:http', 'undici', 'better-sqlite3']);
  });
});
