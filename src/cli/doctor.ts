import { type Env, readEnvFrom } from '../config/config.js';
import { scrubSecrets } from '../scrub.js';
import { renderTable, runChecks, summary } from '../doctor/index.js';

// `assistant-bridge doctor`: checks the configuration, the database, the upstream, Slack and
// Discord, prints one table, and exits 1 when any row failed (0 otherwise, 2 on bad usage).

export interface DoctorIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  /** The environment; `.env` (see dotenvPath) fills in what it lacks. Default process.env. */
  env?: Env;
  /** Default: the `.env` found from the project folder (config/env-file.ts); tests point it elsewhere. */
  dotenvPath?: string;
  /** Per network request; default 5000. */
  timeoutMs?: number;
}

const USAGE = `usage: assistant-bridge doctor [--timeout-ms N]

Checks the configuration (environment and .env), DATABASE_PATH, the upstream chat service
(reachable, API key accepted, every bot id known; with no CHAT_API_URL, the built-in emulator
the playground would use), Slack (auth.test, scopes, Socket Mode or signing secret) and
Discord (/users/@me, Message Content intent, invite URL). With nothing configured it checks
what \`start\` would run: the playground on the built-in emulator.
Exit status: 0 all passed, 1 a check failed, 2 bad usage.
`;

export async function run(
  args: string[],
  io: DoctorIo = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  let timeoutMs = io.timeoutMs;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--help' || arg === '-h') {
      io.stdout.write(USAGE);
      return 0;
    }
    const [flag, inline] = (arg ?? '').split('=', 2) as [string, string | undefined];
    if (flag === '--timeout-ms') {
      const value = inline ?? args[++i];
      if (value === undefined || !/^\d+$/.test(value) || Number(value) === 0) {
        io.stderr.write('doctor: --timeout-ms needs a whole number of milliseconds\n');
        return 2;
      }
      timeoutMs = Number(value);
      continue;
    }
    io.stderr.write(`doctor: unknown argument ${JSON.stringify(arg)}\n${USAGE}`);
    return 2;
  }

  const { env, file, fileNames } = readEnvFrom(io.env ?? process.env, io.dotenvPath);
  if (file?.note !== undefined)
    io.stdout.write(`${file.note.level === 'warn' ? 'warning: ' : ''}${file.note.text}\n\n`);
  const rows = await runChecks(env, { envFileNames: fileNames, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
  // runChecks scrubs its rows; the whole output once more, so no later row can slip.
  io.stdout.write(scrubSecrets(renderTable(rows)));
  io.stdout.write(summary(rows));
  return rows.some((r) => r.status === 'FAIL') ? 1 : 0;
}
