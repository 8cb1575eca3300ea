import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { ConversationStore, EventStore, InFlightStore } from '../core/ports.js';
import type { Logger } from '../logger.js';
import { createConversationRepo } from './conversation-repo.js';
import { createEventRepo } from './event-repo.js';
import { createInFlightRepo } from './inflight-repo.js';
import { createInstallationRepo, type InstallationRepo } from './installation-repo.js';
import { loadMigrations, migrate } from './migrate.js';

export { MigrationError, migrate, loadMigrations, currentVersion } from './migrate.js';
export type { InstallationRepo, InstallationKey } from './installation-repo.js';

export interface Store {
  readonly db: Database.Database;
  readonly path: string;
  conversations: ConversationStore;
  events: EventStore;
  inflight: InFlightStore;
  installations: InstallationRepo;
  isOpen(): boolean;
  close(): void;
}

export interface OpenStoreOptions {
  logger?: Logger;
  /** Apply pending migrations on open (default true). `migrate` and `start` both do. */
  migrate?: boolean;
  migrationsDir?: string;
}

/** Opens (creating the folder and file) the SQLite database in WAL mode and migrates it. */
export function openStore(path: string, opts: OpenStoreOptions = {}): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    // Another process (doctor, migrate) may hold a write lock briefly; wait rather than fail.
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    if (opts.migrate !== false) {
      const applied = migrate(db, loadMigrations(opts.migrationsDir));
      if (applied.length > 0) opts.logger?.info({ applied }, 'database migrated');
    }
  } catch (err) {
    db.close();
    throw err;
  }
  return {
    db,
    path,
    conversations: createConversationRepo(db),
    events: createEventRepo(db),
    inflight: createInFlightRepo(db),
    installations: createInstallationRepo(db),
    isOpen: () => db.open,
    close: () => {
      if (db.open) db.close();
    },
  };
}
