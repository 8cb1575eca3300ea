import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../resilience/bridge-child.js';

// The package's command as a user types it: --help and --version on every command, with no side
// effect (nothing starts, no migration is applied, no database file appears).

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin', 'assistant-bridge.js');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

let dir: string;
beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'bridge-cli-args-'));
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  // A database path in the test's folder: whatever a command wrongly opened would appear there.
  const env = {
    PATH: process.env.PATH ?? '',
    DATABASE_PATH: join(dir, 'bridge.db'),
    CHAT_API_URL: 'http://127.0.0.1:9',
  };
  return cliIn(dir, env, ...args);
}

async function cliIn(
  cwd: string,
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [BIN, ...args], { cwd, env, timeout: 20_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code?: number; stdout: string; stderr: string }) => ({
      code: err.code ?? -1,
      stdout: err.stdout,
      stderr: err.stderr,
    }),
  );
}

const COMMANDS = ['start', 'migrate', 'doctor', 'chat', 'conversations', 'emulator'];

describe('assistant-bridge --help and --version', () => {
  it.each([[], ...COMMANDS.map((c) => [c])])('%s --version prints the version and exits 0', async (...cmd) => {
    const r = await cli(...(cmd as string[]), '--version');
    expect(r).toMatchObject({ code: 0, stdout: `assistant-bridge ${VERSION}\n` });
  });

  it.each(COMMANDS)('%s --help prints its usage and exits 0 without doing anything', async (cmd) => {
    const r = await cli(cmd, '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`usage: assistant-bridge ${cmd}`);
    expect(existsSync(join(dir, 'bridge.db'))).toBe(false);
  });

  it('top-level --help lists every command', async () => {
    const r = await cli('--help');
    expect(r.code).toBe(0);
    for (const c of COMMANDS) expect(r.stdout).toContain(c);
  });

  it.each(['start', 'migrate'])('%s with an unknown option says so, exits 2 and applies nothing', async (cmd) => {
    const r = await cli(cmd, '--bogus');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Unknown option '--bogus'");
    expect(r.stderr).toContain(`usage: assistant-bridge ${cmd}`);
    expect(existsSync(join(dir, 'bridge.db'))).toBe(false);
  });

  it('chat --help mentions /exit', async () => {
    expect((await cli('chat', '--help')).stdout).toContain('/exit');
  });
});

describe('doctor and start on .env.example alone', () => {
  it('doctor reports the problems start exits on (.env.example with two bad values), and creates no database', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'bridge-env-example-'));
    try {
      // .env.example itself is a valid configuration (start runs the playground on it), so two
      // values are broken here: start must exit 2 on them and doctor name the same problems.
      const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
      writeFileSync(
        join(cwd, '.env'),
        example.replace(/^PORT=.*$/m, 'PORT=-1').replace(/^CHAT_API_FORM=.*$/m, 'CHAT_API_FORM=z'),
      );
      const env = { PATH: process.env.PATH ?? '' };
      const start = await cliIn(cwd, env, 'start');
      expect(start.code).toBe(2);
      const problems = start.stderr
        .split('\n')
        .filter((l) => l.startsWith('  - '))
        .map((l) => l.slice(4));
      expect(problems.length).toBeGreaterThan(0);

      const doctor = await cliIn(cwd, env, 'doctor', '--timeout-ms', '2000');
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toMatch(/^config\s+FAIL/m);
      for (const p of problems) expect(doctor.stdout).toContain(p);
      // (The database row on a valid .env is checked in src/doctor/doctor.test.ts.)
      expect(existsSync(join(cwd, 'data'))).toBe(false);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe('bin/assistant-bridge.js', () => {
  // A copy of the bin in a small package of its own: src/cli.ts, tsconfig.build.json, and the
  // project's TypeScript. The real dist/ is left alone.
  function tinyPackage(): string {
    const root = mkdtempSync(join(tmpdir(), 'bridge-bin-'));
    mkdirSync(join(root, 'bin'));
    mkdirSync(join(root, 'src'));
    mkdirSync(join(root, 'node_modules'));
    copyFileSync(BIN, join(root, 'bin', 'assistant-bridge.js'));
    symlinkSync(join(ROOT, 'node_modules', 'typescript'), join(root, 'node_modules', 'typescript'));
    writeFileSync(join(root, 'package.json'), '{"type":"module"}');
    writeFileSync(
      join(root, 'tsconfig.build.json'),
      JSON.stringify({
        compilerOptions: { module: 'nodenext', target: 'es2022', outDir: 'dist', rootDir: 'src', types: [] },
        include: ['src'],
      }),
    );
    return root;
  }
  const runBin = (root: string) =>
    promisify(execFile)(process.execPath, [join(root, 'bin', 'assistant-bridge.js')], { cwd: root, timeout: 60_000 });

  it('builds when dist/ is missing, and again when src/ is newer than dist/', async () => {
    const root = tinyPackage();
    try {
      writeFileSync(join(root, 'src', 'cli.ts'), "console.log('first');\n");
      const first = await runBin(root);
      expect(first.stdout).toBe('first\n');
      expect(first.stderr).toContain('building');

      const again = await runBin(root);
      expect(again).toEqual({ stdout: 'first\n', stderr: '' });

      writeFileSync(join(root, 'src', 'cli.ts'), "console.log('second');\n");
      const later = new Date(Date.now() + 5_000);
      utimesSync(join(root, 'src', 'cli.ts'), later, later);
      expect((await runBin(root)).stdout).toBe('second\n');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);
});
