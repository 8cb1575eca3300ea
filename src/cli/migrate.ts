import { ConfigError, parseRawEnv, readEnv } from '../config/config.js';
import { MigrationError, migrate, openStore } from '../store/index.js';

/** `assistant-bridge migrate`: apply migrations/ to DATABASE_PATH and exit. */
export async function run(_args: string[]): Promise<number> {
  try {
    const raw = parseRawEnv(readEnv());
    const store = openStore(raw.DATABASE_PATH, { migrate: false });
    try {
      const applied = migrate(store.db);
      process.stdout.write(
        applied.length === 0
          ? `database ${raw.DATABASE_PATH} is up to date\n`
          : `applied ${applied.length} migration(s) to ${raw.DATABASE_PATH}: ${applied.join(', ')}\n`,
      );
    } finally {
      store.close();
    }
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    if (err instanceof MigrationError) {
      process.stderr.write(`migration failed: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
