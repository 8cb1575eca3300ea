import type { Config } from './config/config.js';
import { componentLogger, type Logger, scrubSecrets } from './logger.js';
import type { AsyncStore } from './store/ports.js';
import { MigrationError, openStore } from './store/sqlite/index.js';

// The store `start` runs on: SQLite at DATABASE_PATH (one process), or PostgreSQL at DATABASE_URL
// (several replicas share it). Either way the bridge sees the one asynchronous port.

/** Opens (and migrates) the configured store; undefined after saying why on stderr and in the log. */
export async function openBridgeStore(config: Config, root: Logger): Promise<AsyncStore | undefined> {
  const log = componentLogger(root, 'store');
  if (config.postgres !== undefined) {
    // The driver is loaded only when it is used: it is ~10 MB of an idle SQLite bridge's memory.
    const { createPgStore, describePgUrl } = await import('./store/pg/index.js');
    const where = describePgUrl(config.postgres.url);
    try {
      return await createPgStore(config.postgres.url, { replicaId: config.replica.id, logger: log });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      const { pgOpenHint } = await import('./doctor/database-check.js');
      const check = await pgOpenHint(err);
      log.fatal({ err: reason, database: where, check }, 'cannot open the database');
      // A driver's message may quote the connection string: never its password.
      process.stderr.write(
        scrubSecrets(
          err instanceof MigrationError ? `${reason}\n  ${check}\n` : `cannot open ${where}: ${reason}\n  ${check}\n`,
        ),
      );
      return undefined;
    }
  }
  try {
    return openStore(config.service.databasePath, { logger: log });
  } catch (err) {
    // The doctor's hint for the same failure: who must be able to write where, or what to restore.
    const { sqliteOpenHint } = await import('./doctor/database-check.js');
    const check = sqliteOpenHint(err);
    const reason = err instanceof Error ? err.message : String(err);
    log.fatal({ err: reason, database: config.service.databasePath, check }, 'cannot open the database');
    process.stderr.write(
      err instanceof MigrationError
        ? `${err.message}\n  ${check}\n`
        : `cannot open ${config.service.databasePath}: ${reason}\n  ${check}\n`,
    );
    return undefined;
  }
}
