import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureBuilt } from '../resilience/bridge-child.js';

// Permission tests (a read-only file or folder) prove nothing as root: root writes through chmod.
// CI runs as root, so there such a test runs its scenario in a child process as `nobody`
// (setpriv, or runuser when setpriv is missing), on the built dist/, in a folder of nobody's.
// Only where neither tool exists is it skipped.

const ROOT = resolve(import.meta.dirname, '..', '..');
const NOBODY = 65534;

export const isRoot = process.getuid?.() === 0;

function hasTool(name: string): boolean {
  try {
    execFileSync(name, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The command prefix that drops root to nobody; undefined when no tool for it exists. */
function dropPrefix(): string[] | undefined {
  if (hasTool('setpriv')) return ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--'];
  if (hasTool('runuser')) return ['runuser', '-u', 'nobody', '--'];
  return undefined;
}

const prefix = isRoot ? dropPrefix() : undefined;

/** True when the tests run as root and can drop to nobody: the child-process variants run. */
export const canDropRoot = prefix !== undefined;

/** A folder of nobody's for a scenario (the caller removes it with `removeFolder`). */
export function nobodysFolder(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  chownSync(dir, NOBODY, NOBODY);
  chmodSync(dir, 0o700);
  return dir;
}

export function removeFolder(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** `dist/<path>` as an import specifier for a scenario. */
export const distModule = (path: string) => pathToFileURL(join(ROOT, 'dist', path)).href;

/**
 * Runs `body` (the inside of an async ES module function, JavaScript, which returns what the
 * test asserts on) as nobody in `dir`, with `dist/` built first; returns what it returned, via
 * JSON. The module starts with `imports` (lines of `import … from distModule(…)`).
 */
export function runAsNobody<T>(dir: string, imports: string, body: string): T {
  if (prefix === undefined) throw new Error('runAsNobody: not root, or no setpriv/runuser');
  ensureBuilt();
  const file = join(dir, 'scenario.mjs');
  writeFileSync(
    file,
    `${imports}\nconst run = async () => {\n${body}\n};\nprocess.stdout.write('\\n' + JSON.stringify(await run()));\n`,
  );
  chownSync(file, NOBODY, NOBODY);
  const [cmd, ...args] = [...prefix, process.execPath, file];
  const out = spawnSync(cmd as string, args, { cwd: dir, encoding: 'utf8', timeout: 30_000 });
  if (out.status !== 0) {
    throw new Error(`scenario as nobody failed (${out.status ?? out.signal}): ${out.stderr.slice(-2000)}`);
  }
  const last = out.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as T;
}
