#!/usr/bin/env node
// `assistant-bridge <command>`: dispatches to the command modules. Each module exports
// `run(args): Promise<number>` and returns the exit code; nothing below calls process.exit.
// `--version` anywhere and `start --help` are answered here, before any command module loads, so
// neither has a side effect; every other command answers its own `--help`.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { scrubSecrets } from './scrub.js';

const USAGE = `usage: assistant-bridge <command>

commands:
  start                          run the bridge: Slack and/or Discord as the environment
                                 configures them; with neither, the playground (a web chat
                                 at http://127.0.0.1:3000/) on the built-in emulator
  migrate                        apply the SQL migrations to DATABASE_PATH and exit
  doctor                         check configuration, database, upstream, Slack and Discord
  chat [--bot ID]                talk to the upstream bot in the terminal
  conversations list|show ID     list the bot's conversations, or show one's history
  emulator [--port N] [--form a|b|both] [--api-key K] [--stream-format F] ...
                                 run a local emulator of the upstream chat service

First run: \`npm start\` (= build, then start) and open http://127.0.0.1:3000/.
Every command takes --help; --version prints the version. Configuration: the environment over
.env (see .env.example and README.md).
`;

const START_USAGE = `usage: assistant-bridge start

Runs the bridge: the connectors the environment configures (Slack and/or Discord), the HTTP
server on HOST:PORT (health, readiness, metrics, Slack HTTP mode and OAuth), and the playground,
a web chat at http://127.0.0.1:PORT/ (PLAYGROUND: auto runs it when neither Slack nor Discord is
configured; on also with them; off never). With no CHAT_API_URL the playground's upstream is the
built-in emulator, in this process. The environment, over .env (in the working directory, or the
project folder's), is the whole configuration; check it with \`assistant-bridge doctor\`.
SIGTERM or Ctrl-C drains the replies in flight and exits; a second Ctrl-C exits at once.
`;

/** package.json's version; the file sits one folder above both src/cli.ts and dist/cli.js. */
function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return String(pkg.version);
}

/** `start` takes no arguments: anything but --help is a usage error, so it never starts by accident. */
function checkStartArgs(args: string[]): number | undefined {
  try {
    const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' } }, strict: true });
    if (values.help === true) {
      process.stdout.write(START_USAGE);
      return 0;
    }
    return undefined;
  } catch (err) {
    process.stderr.write(`start: ${err instanceof Error ? err.message : String(err)}\n\n${START_USAGE}`);
    return 2;
  }
}

type Command = (args: string[]) => Promise<number>;

const commands: Record<string, () => Promise<Command>> = {
  start: async () => {
    // A bridge mostly waits on the network: V8 trades a little CPU for a smaller heap (bench,
    // 2026-11-26: idle RSS 85-90 MB instead of 95-100, 153 MB instead of 196 at 200 replies;
    // about 10-30% more CPU a reply; lone-reply latency unchanged). Set before the bridge's
    // modules load; node refuses this flag in NODE_OPTIONS.
    const v8 = await import('node:v8');
    v8.setFlagsFromString('--optimize-for-size');
    // Not also --semi-space-growth-factor=1: it took the peak at 200 replies from ~155 to ~125
    // MB, but the extra scavenges slowed the saturated process enough that paced posts reached
    // Slack back to back (74-116 429s under the bench's strict model instead of 0-6).
    return (await import('./start.js')).run;
  },
  migrate: async () => (await import('./cli/migrate.js')).run,
  doctor: async () => (await import('./cli/doctor.js')).run,
  chat: async () => (await import('./cli/chat.js')).run,
  conversations: async () => (await import('./cli/conversations.js')).run,
  emulator: async () => (await import('./cli/emulator.js')).run,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (argv.includes('--version') || argv.includes('-V')) {
    process.stdout.write(`assistant-bridge ${version()}\n`);
    return 0;
  }
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  const load = commands[name];
  if (!load) {
    process.stderr.write(`assistant-bridge: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  if (name === 'start') {
    const code = checkStartArgs(rest);
    if (code !== undefined) return code;
  }
  const command = await load();
  return command(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // A bug, not a user mistake: say so briefly; the stack helps whoever reports it.
    const text = `assistant-bridge: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`;
    // A configured secret never reaches the terminal, not even in a stack.
    process.stderr.write(scrubSecrets(text));
    process.exitCode = 1;
  },
);
