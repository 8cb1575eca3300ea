import type { Config } from './config/config.js';
import type { BudgetStore, FeedbackStore } from './core/ports.js';
import { componentLogger, type Logger } from './logger.js';
import type { AsyncStore } from './store/async-port.js';
import { MigrationError, openStore } from './store/index.js';
import { createSqliteAsyncStore } from './store/sqlite-async.js';

// The store `start` runs on: SQLite at DATABASE_PATH (one process), or PostgreSQL at DATABASE_URL
// (several replicas share it). Either way the bridge sees the one asynchronous port.

export interface BridgeStore {
  data: AsyncStore;
  /** Votes (FEEDBACK). */
  feedback: FeedbackStore | undefined;
  /** What the scheduler learned about rate limits, kept across restarts. */
  budgets: BudgetStore | undefined;
  close(): Promise<void>;
}

/** Opens (and migrates) the configured store; undefined after saying why on stderr and in the log. */
export async function openBridgeStore(config: Config, root: Logger): Promise<BridgeStore | undefined> {
  const log = componentLogger(root, 'store');
  if (config.postgres !== undefined) {
    // The driver is loaded only when it is used: it is ~10 MB of an idle SQLite bridge's memory.
    const { createPgStore, describePgUrl } = await import('./store/pg/index.js');
    const where = describePgUrl(config.postgres.url);
    try {
      const data = await createPgStore(config.postgres.url, { replicaId: config.replica.id, logger: log });
      return { data, feedback: data.feedback, budgets: data.budgets, close: () => data.close() };
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      log.fatal({ err: reason, database: where }, 'cannot open the database');
      process.stderr.write(err instanceof MigrationError ? `${reason}\n` : `cannot open ${where}: ${reason}\n`);
      return undefined;
    }
  }
  try {
    const store = openStore(config.service.databasePath, { logger: log });
    const data = createSqliteAsyncStore(store);
    return { data, feedback: data.feedback, budgets: data.budgets, close: () => data.close() };
  } catch (err) {
    log.fatal({ err: err instanceof Error ? err.message : String(err) }, 'cannot open the database');
    process.stderr.write(
      err instanceof MigrationError
        ? `${err.message}\n`
        : `cannot open ${config.service.databasePath}: ${String(err)}\n`,
    );
    return undefined;
  }
}
