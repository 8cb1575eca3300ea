import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The core is platform-neutral and sealed: it must not import a platform SDK, the HTTP client or
// the database driver, nor the layers around it (it gets routes, chat capabilities, stores and
// sinks through its ports, wired in src/main.ts). This reads the sources (not the compiled graph)
// so that a type-only import fails too.

const coreDir = dirname(fileURLToPath(import.meta.url));
const srcDir = dirname(coreDir);
const FORBIDDEN = [/^@slack\//, /^discord\.js$/, /^@discordjs\//, /^undici$/, /^better-sqlite3$/, /^(node:)?https?$/];
/** Folders of src/ the core must not reach into (src/main.ts included: it is the composition root). */
const FORBIDDEN_LAYERS = ['config', 'store', 'upstream', 'connectors', 'server', 'emulator', 'cli', 'doctor', 'main'];

/** The src/ layer a relative import from `file` lands in (undefined for packages and core itself). */
function layerOf(file: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const target = relative(srcDir, resolve(dirname(file), spec));
  const first = target.split(sep)[0] ?? '';
  const layer = first.replace(/\.(ts|js)$/, '');
  return layer === 'core' ? undefined : layer;
}

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

describe('core imports no SDK and no outer layer', () => {
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

  it('no core file imports config, store, upstream, connectors or any other layer around it', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(coreDir)) {
      for (const spec of importedModules(readFileSync(file, 'utf8'))) {
        const layer = layerOf(file, spec);
        if (layer !== undefined && FORBIDDEN_LAYERS.includes(layer)) {
          offenders.push(`${relative(coreDir, file)} imports ${spec}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the layer check sees where a relative import lands', () => {
    const relay = join(coreDir, 'relay.ts');
    expect(layerOf(relay, '../config/routes.js')).toBe('config');
    expect(layerOf(relay, '../store/index.js')).toBe('store');
    expect(layerOf(relay, '../main.js')).toBe('main');
    expect(layerOf(join(coreDir, 'sub', 'x.ts'), '../../upstream/index.js')).toBe('upstream');
    expect(layerOf(relay, './ports.js')).toBeUndefined();
    expect(layerOf(relay, 'pino')).toBeUndefined();
  });

  it('the import scanner catches the forms it must catch', () => {
    const src = `import { App } from '@slack/bolt';\nimport type { Client } from 'discord.js';\nexport * from "undici";\nconst d = await import('better-sqlite3');\nimport 'node:http';`;
    expect(importedModules(src)).toEqual(['@slack/bolt', 'discord.js', 'node:http', 'undici', 'better-sqlite3']);
  });
});
