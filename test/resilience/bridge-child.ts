import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { assertNoPings } from '../fakes/discord/writes.js';
import { freePort } from '../fakes/free-port.js';
import { cpuMsOf } from '../support/child-cpu.js';

// The real bridge as a child process (`node dist/cli.js start`) for the crash, SIGTERM and
// reconnect tests: its environment points at fakes and an emulator in the test process. The
// database folder belongs to the test, so a restart can reuse it.

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist', 'cli.js');
const BUILD_INFO = join(ROOT, 'dist', '.tsbuildinfo');
// One lock per checkout: several worktrees on one machine build their own dist/, and a lock
// shared between them made one checkout's tests wait out another's build.
const BUILD_LOCK = join(
  tmpdir(),
  `assistant-bridge-build-${createHash('sha256').update(ROOT).digest('hex').slice(0, 16)}.lock`,
);

function newestMtime(dir: string, accept: (name: string) => boolean): number {
  let newest = 0;
  if (!existsSync(dir)) return 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(p, accept));
    else if (accept(entry.name)) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

const isSource = (n: string) => n.endsWith('.ts') && !n.endsWith('.test.ts') && !n.endsWith('.d.ts');

function distIsFresh(): boolean {
  if (!existsSync(CLI)) return false;
  // tsc -b/incremental rewrites only what changed: compare with the newest output, not cli.js.
  const built = newestMtime(join(ROOT, 'dist'), (n) => n.endsWith('.js') || n === '.tsbuildinfo');
  return built >= newestMtime(join(ROOT, 'src'), isSource);
}

/**
 * Builds dist/ when it is missing or older than src/ (bounded; several test files may ask at
 * once, so the build runs under a lock and re-checks inside it).
 */
export function ensureBuilt(): void {
  if (distIsFresh()) return;
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    // A second waiter's build is incremental and quick once the first one finished.
    execFileSync('flock', [BUILD_LOCK, process.execPath, tsc, '-p', 'tsconfig.build.json'], {
      cwd: ROOT,
      stdio: 'pipe',
      timeout: 90_000,
    });
    // An incremental build whose sources only got newer timestamps (a checkout, a merge) writes
    // nothing: mark the build as checked, or every later call would build again (bin does the same).
    if (existsSync(BUILD_INFO)) utimesSync(BUILD_INFO, new Date(), new Date());
  } catch (err) {
    // Type errors elsewhere still emit JavaScript; only a missing CLI is fatal.
    if (!existsSync(CLI)) throw err;
  }
}

export interface BridgeChild {
  readonly pid: number;
  readonly base: string;
  /** Exit code (null after a signal) once exited; undefined while running. */
  readonly exitCode: number | null | undefined;
  readonly exitSignal: NodeJS.Signals | null | undefined;
  /** Everything written to stdout and stderr (pino logs), for failure messages. */
  readonly log: string[];
  exited: Promise<void>;
  kill(signal: NodeJS.Signals): void;
  readyz(): Promise<{ status: number; body: string }>;
  /**
   * Waits until /readyz answers 200; fails once the child used `timeoutMs` of CPU time without
   * getting there, or (past `timeoutMs` of wall time) used none for a while.
   */
  waitReady(timeoutMs?: number): Promise<void>;
  tail(n?: number): string;
}

/** A child not ready that used no CPU for this long (and past its budget) waits for nothing. */
const IDLE_MS = 5_000;

export async function spawnBridge(env: Record<string, string>, opts: { port?: number } = {}): Promise<BridgeChild> {
  const port = opts.port ?? (await freePort());
  const cwd = mkdtempSync(join(tmpdir(), 'bridge-child-'));
  const child: ChildProcess = spawn(process.execPath, [CLI, 'start'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      USER_MESSAGES_PER_MINUTE: '1000',
      ...env,
    },
    // An empty folder: a developer's .env in the repository must not reach the child (it could
    // point it at a real Slack or Discord).
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  // A pipe chunk can end mid-line: keep the unfinished tail of each stream until its newline, so
  // a long JSON line is never seen as two halves that neither match a search.
  const collect = (stream: NodeJS.ReadableStream | null) => {
    let partial = '';
    const push = (lines: string[]) => {
      for (const line of lines) if (line !== '') log.push(line);
      if (log.length > 2000) log.splice(0, log.length - 2000);
    };
    stream?.on('data', (s: Buffer) => {
      const lines = (partial + s.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      push(lines);
    });
    stream?.on('end', () => push([partial]));
  };
  collect(child.stdout);
  collect(child.stderr);
  let exitCode: number | null | undefined;
  let exitSignal: NodeJS.Signals | null | undefined;
  const exited = new Promise<void>((res) => {
    // 'close', not 'exit': it comes once the child's stdout and stderr are read to the end, so
    // every line it wrote is in the log when a test looks.
    child.once('close', (code, signal) => {
      rmSync(cwd, { recursive: true, force: true });
      exitCode = code;
      exitSignal = signal;
      res();
    });
  });
  const base = `http://127.0.0.1:${port}`;
  const readyz = async () => {
    const r = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) });
    return { status: r.status, body: await r.text() };
  };
  const handle: BridgeChild = {
    pid: child.pid ?? -1,
    base,
    get exitCode() {
      return exitCode;
    },
    get exitSignal() {
      return exitSignal;
    },
    log,
    exited,
    kill(signal) {
      if (exitCode === undefined) child.kill(signal);
    },
    readyz,
    async waitReady(timeoutMs = 20_000) {
      // The budget is the child's own CPU time where /proc tells it: a bridge needs 2-3 s of CPU
      // to start (module loading mostly), which took more than 30 s of wall time with five
      // children starting at once at load 17-21. Wall time still ends the wait once the child
      // has used no CPU for IDLE_MS (it waits for something that does not come), and is the
      // whole budget where no CPU time can be read.
      const started = Date.now();
      const idleSince = { at: started, cpuMs: cpuMsOf(handle.pid) };
      let last = '';
      for (;;) {
        if (exitCode !== undefined)
          throw new Error(`bridge exited (${exitCode ?? exitSignal}) before ready:\n${handle.tail()}`);
        try {
          const r = await readyz();
          if (r.status === 200) return;
          last = `${r.status} ${r.body}`;
        } catch {
          // not listening yet
        }
        const now = Date.now();
        const cpuMs = cpuMsOf(handle.pid);
        if (cpuMs !== idleSince.cpuMs) Object.assign(idleSince, { at: now, cpuMs });
        const worked = cpuMs !== undefined && cpuMs > timeoutMs;
        const stuck = now - started > timeoutMs && (cpuMs === undefined || now - idleSince.at > IDLE_MS);
        if (worked || stuck) {
          const spent = `${now - started} ms (${cpuMs === undefined ? 'CPU time unknown' : `${cpuMs} ms of CPU`})`;
          throw new Error(`bridge not ready after ${spent} (last /readyz: ${last}):\n${handle.tail()}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    tail(n = 40) {
      return log.slice(-n).join('\n');
    },
  };
  return handle;
}

/** Kill (SIGKILL) and wait, bounded; for afterAll. */
export async function killHard(child: BridgeChild | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== undefined || child.exitSignal !== undefined) return;
  child.kill('SIGKILL');
  await Promise.race([child.exited, new Promise((r) => setTimeout(r, 5_000))]);
}

/** What the child-process tests share: a fake Discord, an emulator and a folder for databases. */
export interface ChildWorld {
  fake: FakeDiscord;
  emu: Emulator;
  dir: string;
  /** CHAT_API_URL, CHAT_API_KEY and CHAT_BOT_ID for the emulator (the form is the test's). */
  upstreamEnv(): Record<string, string>;
  /** upstreamEnv(), the fake Discord's token and API URL, and DATABASE_PATH `db` in `dir`. */
  discordEnv(db?: string): Record<string, string>;
  close(): Promise<void>;
}

/** Builds dist/ if needed, then starts the fakes a child bridge talks to (loopback only). */
export async function startChildWorld(name: string, apiKey: string, bot: string): Promise<ChildWorld> {
  ensureBuilt();
  const fake = await startFakeDiscord({ rateLimit: { limit: 50, windowMs: 1000 } });
  const emu = await startEmulator({ apiKey, bots: [bot], chunkDelayMs: 2 });
  const dir = mkdtempSync(join(tmpdir(), `bridge-${name}-`));
  const upstreamEnv = () => ({ CHAT_API_URL: emu.url, CHAT_API_KEY: apiKey, CHAT_BOT_ID: bot });
  return {
    fake,
    emu,
    dir,
    upstreamEnv,
    discordEnv: (db = 'bridge.db') => ({
      ...upstreamEnv(),
      DISCORD_BOT_TOKEN: fake.token,
      DISCORD_API_URL: fake.apiUrl,
      DATABASE_PATH: join(dir, db),
    }),
    async close() {
      await fake.close();
      await emu.close();
      rmSync(dir, { recursive: true, force: true });
      // The shared check over every write the child bridge made.
      assertNoPings(fake.record);
    },
  };
}

/** A test file's child world and the bridges it spawns. */
export interface ChildWorldFile {
  /** The world, once the file's beforeAll started it. */
  readonly world: ChildWorld;
  /** spawnBridge, the child killed after the file's tests at the latest. */
  spawn(env: Record<string, string>, opts?: { port?: number }): Promise<BridgeChild>;
}

/** Starts a child world before a test file's tests; after them kills every bridge it spawned and closes it. */
export function childWorldPerFile(name: string, apiKey: string, bot: string): ChildWorldFile {
  let world: ChildWorld | undefined;
  const children: BridgeChild[] = [];
  beforeAll(async () => {
    world = await startChildWorld(name, apiKey, bot);
  }, 120_000);
  afterAll(async () => {
    for (const c of children) await killHard(c);
    await world?.close();
  });
  return {
    get world() {
      if (world === undefined) throw new Error('the child world is started in beforeAll');
      return world;
    },
    async spawn(env, opts) {
      const child = await spawnBridge(env, opts);
      children.push(child);
      return child;
    },
  };
}
