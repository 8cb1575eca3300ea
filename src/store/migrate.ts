import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';

// Migrations are plain SQL files `migrations/NNNN_name.sql`, applied in order, each in its own
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

export function currentVersion(db: Database.Database): number {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
  return row.v ?? 0;
}

/** Applies pending migrations; returns the names applied. Throws MigrationError. */
export function migrate(db: Database.Database, migrations = loadMigrations(), now = Date.now): string[] {
  const have = currentVersion(db);
  const newest = migrations.at(-1)?.version ?? 0;
  if (have > newest) {
    throw new MigrationError(
      `the database is at schema version ${have}, newer than this release knows (${newest}); use a newer assistant-bridge or another DATABASE_PATH`,
    );
  }
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const applied: string[] = [];
  for (const m of migrations) {
    if (m.version <= have) continue;
    const apply = db.transaction(() => {
      db.exec(m.sql);
      record.run(m.version, m.name, now());
    });
    try {
      apply();
    } catch (err) {
      throw new MigrationError(`migration ${m.name} failed: ${(err as Error).message}`);
    }
    applied.push(m.name);
  }
  return applied;
}
