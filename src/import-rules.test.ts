import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Who may import whom, as an allow-list: the table in docs/architecture.md ("Who may import
// whom") is the rule, so the doc and this test cannot drift. Every import of every non-test file
// under src/ (type-only and dynamic ones included: this reads the sources, not the compiled
// graph) must land in its own layer or one its row names, and a package must be named in its
// row. And no file reaches itself through its imports (no circles).

const srcDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(srcDir);

interface Rule {
  layers: Set<string>;
  packages: Set<string>;
}

function rulesFromDoc(): Map<string, Rule> {
  const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
  const start = doc.indexOf('## Who may import whom');
  const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
  const names = (cell: string) => new Set([...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? ''));
  const rules = new Map<string, Rule>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    // | layer | project | packages |  → ['', layer, project, packages, '']
    const layer = /^`([^`]+)`$/.exec(cells[1] ?? '')?.[1];
    if (cells.length !== 5 || layer === undefined) continue;
    rules.set(layer, { layers: names(cells[2] ?? ''), packages: names(cells[3] ?? '') });
  }
  return rules;
}

/** The layer of a file under src/: its folder, `connectors/<x>` and `store/<x>` apart, or a top file's name. */
export function layerOfFile(file: string): string {
  const parts = relative(srcDir, file).split(sep);
  const [first = '', second] = parts;
  if (parts.length === 1) return first.replace(/\.(ts|js)$/, '');
  if ((first === 'connectors' || first === 'store') && parts.length > 2 && second !== undefined) {
    return `${first}/${second}`;
  }
  return first;
}

/** A package specifier's name: `@scope/name`, `name`, or `node:x` (bare built-ins become `node:x`). */
function packageOf(spec: string): string {
  if (spec.startsWith('node:')) return spec.split('/')[0] ?? spec;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? spec);
}

const BUILTINS = new Set(['fs', 'path', 'http', 'https', 'crypto', 'events', 'os', 'url', 'util', 'stream', 'net']);

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (/\.(ts|mts)$/.test(name) && !/\.test\.ts$/.test(name)) out.push(p);
  }
  return out;
}

export function importedModules(source: string): string[] {
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

const files = sourceFiles(srcDir);
const importsOf = new Map(files.map((f) => [f, importedModules(readFileSync(f, 'utf8'))]));
const target = (file: string, spec: string) => resolve(dirname(file), spec).replace(/\.js$/, '.ts');

describe('who may import whom (docs/architecture.md)', () => {
  const rules = rulesFromDoc();

  it('the doc has a row for every layer of src/, and only for layers that exist', () => {
    const layers = new Set(files.map(layerOfFile));
    expect([...layers].filter((l) => !rules.has(l)).sort()).toEqual([]);
    expect([...rules.keys()].filter((l) => !layers.has(l)).sort()).toEqual([]);
  });

  it('every import lands in its own layer or one its row allows', () => {
    const offenders: string[] = [];
    for (const [file, specs] of importsOf) {
      const layer = layerOfFile(file);
      const rule = rules.get(layer);
      for (const spec of specs) {
        const where = relative(root, file);
        // An absolute path is a URL the page's own script loads from the bridge, not a module.
        if (spec.startsWith('/')) continue;
        if (spec.startsWith('.')) {
          const to = layerOfFile(target(file, spec));
          if (to !== layer && !rule?.layers.has(to)) offenders.push(`${where} (${layer}) imports ${spec} (${to})`);
          continue;
        }
        const pkg = BUILTINS.has(spec) ? `node:${spec}` : packageOf(spec);
        const allowed = rule?.packages.has(pkg) || (pkg.startsWith('node:') && rule?.packages.has('node:*'));
        if (!allowed) offenders.push(`${where} (${layer}) imports the package ${pkg}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the core imports no SDK, no HTTP and no database driver (the table says so)', () => {
    const core = rules.get('core');
    for (const sdk of ['@slack/bolt', 'discord.js', 'undici', 'better-sqlite3', 'pg', 'node:http', 'node:*']) {
      expect(core?.packages.has(sdk)).toBe(false);
    }
    for (const outer of ['config', 'store', 'upstream', 'connectors', 'server', 'main', 'logger']) {
      expect(core?.layers.has(outer)).toBe(false);
    }
  });

  it('no import circles between files', () => {
    const edges = new Map<string, string[]>();
    for (const [file, specs] of importsOf) {
      edges.set(
        file,
        specs.filter((s) => s.startsWith('.')).map((s) => target(file, s)),
      );
    }
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (f: string): void => {
      state.set(f, 'open');
      stack.push(f);
      for (const to of edges.get(f) ?? []) {
        if (!edges.has(to)) continue;
        if (state.get(to) === 'open') {
          circles.push(
            stack
              .slice(stack.indexOf(to))
              .concat(to)
              .map((x) => relative(root, x))
              .join(' → '),
          );
        } else if (state.get(to) === undefined) visit(to);
      }
      stack.pop();
      state.set(f, 'done');
    };
    for (const f of files) if (state.get(f) === undefined) visit(f);
    expect(circles).toEqual([]);
  });

  it('the layer check sees where a file lies', () => {
    expect(layerOfFile(join(srcDir, 'core', 'intake', 'relay.ts'))).toBe('core');
    expect(layerOfFile(join(srcDir, 'connectors', 'slack', 'app.ts'))).toBe('connectors/slack');
    expect(layerOfFile(join(srcDir, 'connectors', 'attachments.ts'))).toBe('connectors');
    expect(layerOfFile(join(srcDir, 'store', 'pg', 'index.ts'))).toBe('store/pg');
    expect(layerOfFile(join(srcDir, 'main.ts'))).toBe('main');
    expect(importedModules("import type { A } from '../x.js';\nconst m = await import('y');")).toEqual([
      '../x.js',
      'y',
    ]);
  });
});
