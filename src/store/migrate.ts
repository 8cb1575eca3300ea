import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// Migrations are plain SQL files `migrations/NNNN_name.sql` (SQLite, applied by sqlite/migrate.ts)
// and `migrations/postgres/NNNN_name.sql` (pg/migrate.ts), applied in order, each in its own
// transaction, with the version recorded in `schema_migrations`. A database whose version is newer
// than the newest file was written by a newer release: refuse it rather than guess.

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export class MigrationError extends Error {
  override readonly name = 'MigrationError';
}

/** The repository's migrations/ folder, found from this file in src/ or dist/. */
export function defaultMigrationsDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return resolve(here, '..', '..', 'migrations');
}

export function loadMigrations(dir = defaultMigrationsDir()): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort();
  const migrations = files.map((f) => ({
    version: Number(f.slice(0, 4)),
    name: f.replace(/\.sql$/, ''),
    sql: readFileSync(join(dir, f), 'utf8'),
  }));
  migrations.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new MigrationError(`migration ${m.name}: expected version ${i + 1} (no gaps or duplicates)`);
  });
  return migrations;
}
