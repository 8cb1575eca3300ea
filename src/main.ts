import { type Config, ConfigError, loadConfig, readEnv } from './config/config.js';
import { componentLogger, createLogger } from './logger.js';
import { MigrationError, openStore } from './store/index.js';

/**
 * `assistant-bridge start` / `npm start`: the composition root. Reads the configuration, builds
 * the parts, runs until SIGTERM/SIGINT, then drains. Configuration mistakes exit 2 with a message
 * naming the variables, never a stack trace.
 */
export async function run(_args: string[]): Promise<number> {
  let config: Config;
  try {
    config = loadConfig(readEnv());
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const root = createLogger({ level: config.service.logLevel });
  const log = componentLogger(root, 'main');
  let store: ReturnType<typeof openStore>;
  try {
    store = openStore(config.service.databasePath, { logger: componentLogger(root, 'store') });
  } catch (err) {
    if (err instanceof MigrationError) {
      log.fatal({ err: err.message }, 'database migration failed');
      return 1;
    }
    throw err;
  }
  log.info('assistant-bridge started');
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  store.close();
  return 0;
}
