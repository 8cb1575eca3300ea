import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findEnvFile, PROJECT_ROOT, resolveDatabasePath } from './env-file.js';
import { readEnvFrom } from './config.js';

// Which .env a command reads and where the database goes, from wherever it was started.

let root: string;
let outside: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'env-file-root-'));
  outside = mkdtempSync(join(tmpdir(), 'env-file-elsewhere-'));
  mkdirSync(join(root, 'src', 'deep'), { recursive: true });
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

describe('findEnvFile', () => {
  it('the project folder is the one holding package.json', () => {
    expect(PROJECT_ROOT).toBe(join(import.meta.dirname, '..', '..'));
  });

  it('from a subfolder of the project: the project .env, paths relative to the project', () => {
    writeFileSync(join(root, '.env'), 'PORT=1234\n');
    const f = findEnvFile(join(root, 'src', 'deep'), root);
    expect(f).toMatchObject({ path: join(root, '.env'), base: root, note: { level: 'info' } });
    expect(resolveDatabasePath(undefined, f.base)).toBe(join(root, 'data', 'bridge.db'));
    expect(resolveDatabasePath('db/x.db', f.base)).toBe(join(root, 'db', 'x.db'));
    expect(resolveDatabasePath('/var/x.db', f.base)).toBe('/var/x.db');
  });

  it('from the project folder with no .env: none, the data/ of the project', () => {
    expect(findEnvFile(join(root, 'src'), root)).toEqual({ path: undefined, base: root });
  });

  it('a .env in the working directory wins, paths relative to it', () => {
    writeFileSync(join(root, '.env'), 'PORT=1\n');
    writeFileSync(join(root, 'src', '.env'), 'PORT=2\n');
    expect(findEnvFile(join(root, 'src'), root)).toEqual({ path: join(root, 'src', '.env'), base: join(root, 'src') });
  });

  it('from outside the project: the project .env is not read, and a warning says so', () => {
    writeFileSync(join(root, '.env'), 'PORT=1\n');
    const f = findEnvFile(outside, root);
    expect(f.path).toBeUndefined();
    expect(f.base).toBe(outside);
    expect(f.note?.level).toBe('warn');
    expect(f.note?.text).toContain(join(root, '.env'));
    // No project .env: nothing to warn about.
    expect(findEnvFile(outside, join(outside, 'nothing-here'))).toEqual({ path: undefined, base: outside });
  });

  it('readEnvFrom: an explicit file is read as given; real variables win over it', () => {
    writeFileSync(join(outside, 'x.env'), 'PORT=1234\nHOST=10.0.0.1\n');
    const { env, file } = readEnvFrom({ HOST: '127.0.0.1' }, join(outside, 'x.env'));
    expect(file).toBeUndefined();
    expect(env).toMatchObject({ PORT: '1234', HOST: '127.0.0.1' });
  });
});
