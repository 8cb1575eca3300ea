import { existsSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

// Which `.env` a command reads, and what a relative DATABASE_PATH is relative to. The project
// folder is where `.env` belongs (next to package.json); a command started from one of its
// subfolders (`cd src && node ../dist/cli.js start`) still finds it, and the database lands in
// the project's data/, not in a new data/ wherever the shell happened to be:
// - `.env` in the working directory: that one, and paths are relative to the working directory
//   (a deployment folder of its own);
// - otherwise, the working directory inside the project folder: the project's `.env` (if any),
//   paths relative to the project folder;
// - otherwise (started from elsewhere): no `.env`, paths relative to the working directory, and
//   a warning when the project folder has a `.env` this run does not read. A `.env` is not read
//   from outside: tests and other projects run the command from their own folders.

/** The folder holding this package's package.json (one above src/ and dist/). */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/[\\/]+$/, '');

export interface EnvFile {
  /** The `.env` to read; undefined: none. */
  path: string | undefined;
  /** What a relative DATABASE_PATH is relative to. */
  base: string;
  /** A line worth printing at start (warn: something the user likely expected did not happen). */
  note?: { level: 'info' | 'warn'; text: string };
}

const inside = (dir: string, root: string) => {
  const rel = relative(root, dir);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

export function findEnvFile(cwd: string = process.cwd(), root: string = PROJECT_ROOT): EnvFile {
  const here = join(cwd, '.env');
  if (existsSync(here)) return { path: here, base: cwd };
  const theirs = join(root, '.env');
  if (inside(cwd, root)) {
    if (!existsSync(theirs)) return { path: undefined, base: root };
    return {
      path: theirs,
      base: root,
      note: { level: 'info', text: `read ${theirs} (the project folder's; started in ${cwd})` },
    };
  }
  if (existsSync(theirs)) {
    return {
      path: undefined,
      base: cwd,
      note: {
        level: 'warn',
        text: `no .env in ${cwd}: ${theirs} is not read from outside the project folder (run the command from ${root}${sep}, or copy the .env here)`,
      },
    };
  }
  return { path: undefined, base: cwd };
}

/** The default database file, and a relative DATABASE_PATH, made absolute against `base`. */
export function resolveDatabasePath(value: string | undefined, base: string): string {
  const v = value?.trim();
  return resolve(base, v === undefined || v === '' ? join('data', 'bridge.db') : v);
}
