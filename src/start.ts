import { type Config, ConfigError, parseRawEnv, readEnvFrom } from './config/config.js';
import type { EnvFile } from './config/env-file.js';
import { slackTokenProblems } from './config/slack-tokens.js';
import { discordTokenProblems } from './config/discord-token.js';
import { describeUnknown, unknownVariables } from './config/unknown-vars.js';
import { warnIfUpstreamDown } from './upstream-check.js';
import { configForStart } from './config/start-config.js';
import { type PlaygroundPlan, useBuiltInEmulator } from './connectors/playground/index.js';
import { openBridgeStore } from './bridge-store.js';
import { componentLogger, createLogger, type Logger } from './logger.js';
import {
  asFatal,
  endWithin,
  errText,
  type Fatal,
  FATAL_TEARDOWN_MS,
  logFatal,
  type ProcessWatch,
  watchProcess,
  withTimeout,
} from './lifecycle.js';
import { type Bridge, buildBridge, STOP_MAX_MS } from './main.js';

// `start`: reads the configuration, then runs the bridge that main.ts builds until a signal or a
// fatal error ends it. Kept apart from the composition root so each file reads on its own.

/**
 * `assistant-bridge start` / `npm start`. Reads the configuration, builds
 * the parts, runs until SIGTERM/SIGINT, then drains. Configuration mistakes exit 2 with a message
 * naming the variables, never a stack trace. Signals are listened for before anything starts (a
 * SIGTERM during start-up drains too and exits 0); a part that cannot start, or a fatal error
 * later, ends the process non-zero after one log line (lifecycle.ts).
 */
export async function run(_args: string[]): Promise<number> {
  let config: Config;
  let playground: PlaygroundPlan;
  let file: EnvFile | undefined;
  let warnings: string[];
  try {
    const read = readEnvFrom();
    file = read.file;
    const raw = parseRawEnv(read.env);
    warnings = [
      ...unknownVariables(read.env, read.fileNames).map(describeUnknown),
      ...slackTokenProblems(raw).warnings,
      ...discordTokenProblems(raw).warnings,
    ];
    ({ config, playground } = configForStart(raw));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const root = createLogger({ level: config.service.logLevel, format: config.service.logFormat });
  const log = componentLogger(root, 'main');
  const life = watchProcess(log);
  if (file?.note !== undefined) log[file.note.level](file.note.text);
  for (const w of warnings) log.warn(w);
  let code = 1;
  try {
    code = await runBridge(config, root, life, playground);
    return code;
  } finally {
    // Whatever handle is still open (a request Discord holds, a pool's socket) cannot keep the
    // process alive once it has decided to end (a bug thrown from here too: exit 1).
    endWithin(code);
  }
}

type Ended = { kind: 'signal'; signal: NodeJS.Signals } | { kind: 'fatal'; fatal: Fatal };
type Outcome = { kind: 'started' } | Ended;

async function runBridge(
  config: Config,
  root: Logger,
  life: ProcessWatch,
  playground: PlaygroundPlan,
): Promise<number> {
  const log = componentLogger(root, 'main');
  // The playground's upstream when no CHAT_API_URL is set: the emulator, in this process.
  const closeEmulator = playground.emulator ? await useBuiltInEmulator(config, log) : async () => {};
  // A configured upstream that does not answer is said at once, while the rest starts (not fatal).
  if (!playground.emulator) {
    void warnIfUpstreamDown(config.upstream, log).catch(() => undefined);
  }
  try {
    return await runParts(config, root, life, playground);
  } finally {
    await withTimeout(closeEmulator(), FATAL_TEARDOWN_MS).catch(() => undefined);
  }
}

async function runParts(config: Config, root: Logger, life: ProcessWatch, playground: PlaygroundPlan): Promise<number> {
  const log = componentLogger(root, 'main');
  const store = await openBridgeStore(config, root);
  if (store === undefined) return 1;
  let bridge: Bridge;
  try {
    bridge = await buildBridge(config, store, root, playground);
  } catch (err) {
    logFatal(log, asFatal(err));
    await withTimeout(store.close(), FATAL_TEARDOWN_MS).catch(() => undefined);
    return 1;
  }
  bridge.onFatal((f) => life.reportFatal(f));
  const ended = (): Promise<Ended> =>
    Promise.race([
      life.signalled.then((signal): Ended => ({ kind: 'signal', signal })),
      life.fatal.then((fatal): Ended => ({ kind: 'fatal', fatal })),
    ]);
  const first: Outcome = await Promise.race([
    bridge.start().then(
      (): Outcome => ({ kind: 'started' }),
      (err: unknown): Outcome => ({ kind: 'fatal', fatal: asFatal(err) }),
    ),
    ended(),
  ]);
  const outcome = first.kind === 'started' ? await ended() : first;
  if (outcome.kind === 'signal') {
    log.info({ signal: outcome.signal }, 'shutting down: draining replies in flight');
    // Bounded, so that a close that never ends cannot leave the process half-stopped.
    const done = await withTimeout(bridge.shutdown(), STOP_MAX_MS).then(
      () => true,
      (err: unknown) => (log.error({ err: errText(err) }, 'shutdown did not finish; exiting'), false),
    );
    if (!done) return 1;
    log.info('stopped');
    return 0;
  }
  // One line says what failed and what to check; then every timer and loop stops (heartbeats,
  // checks, the scheduler, the connectors), bounded, and the process ends non-zero.
  logFatal(log, outcome.fatal);
  await withTimeout(bridge.abort(), FATAL_TEARDOWN_MS).catch(() => undefined);
  return 1;
}
