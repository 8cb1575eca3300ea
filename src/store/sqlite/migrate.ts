import type Database from 'better-sqlite3';
import { loadMigrations, MigrationError } from '../migrate.js';

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
