import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../test/fakes/free-port.js';
import { cpuMsOf } from '../test/support/child-cpu.js';

// The real bridge as a child process (`node dist/cli.js start`), its readiness, its metrics
// and what the kernel says about its memory and CPU time.

export interface BridgeProcess {
  pid: number;
  port: number;
  /** The bridge's temp folder (its SQLite file is `bridge.db` there). */
  dataDir: string;
  /** utime+stime of the process so far, in seconds. */
  cpuSeconds(): number;
  /** Current resident set (VmRSS) in MB. */
  rssMb(): number;
  /** Peak resident set (VmHWM) in MB. */
  peakRssMb(): number;
  metrics(): Promise<string>;
  /** stderr lines the bridge wrote (warnings and errors at LOG_LEVEL=warn), last 200. */
  logTail: string[];
  stop(): Promise<number | null>;
}

function procStatus(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/**
 * How every way of starting the bridge runs node (the image's CMD and ENV, `npm start`, the
 * package's command; test/integration/docker-files.test.ts holds them together), so the bench
 * measures what an operator runs. `BENCH_BRIDGE_UNTUNED=1` leaves both out, for comparison.
 * - A young generation of at most 2 x 4 MB semi-spaces instead of V8's 2 x 16: at 64 replies at
 *   once its pages were most of the peak above the retained heap (soak peak RSS 155 -> 139 MB).
 * - Two malloc arenas instead of glibc's 8 per core: V8's and libuv's threads each kept one
 *   partly used (146 MB; both 129 MB). Neither added 429s at 200 replies under `strict` (1 each).
 */
export const BRIDGE_NODE_FLAGS = ['--max-semi-space-size=4'];
export const BRIDGE_ENV: Record<string, string> = { MALLOC_ARENA_MAX: '2' };

/** The API key every bench upstream (emulator or timing proxy) accepts. */
export const BENCH_API_KEY = 'bench-key';

/** A bench bridge's upstream settings: Form A at `url`, answered as `botId`. */
export function upstreamEnv(url: string, botId = 'demo-bot'): Record<string, string> {
  return { CHAT_API_URL: url, CHAT_API_KEY: BENCH_API_KEY, CHAT_API_FORM: 'a', CHAT_BOT_ID: botId };
}

export async function startBridge(
  env: Record<string, string>,
  opts: { readyTimeoutMs?: number; nodeOptions?: string } = {},
): Promise<BridgeProcess> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'bridge-bench-'));
  const cli = resolve('dist/cli.js');
  const tuned = process.env.BENCH_BRIDGE_UNTUNED ? [] : BRIDGE_NODE_FLAGS;
  const child: ChildProcess = spawn(process.execPath, [...tuned, cli, 'start'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? dir,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_PATH: join(dir, 'bridge.db'),
      LOG_LEVEL: 'warn',
      USER_MESSAGES_PER_MINUTE: '100000',
      MAX_CONCURRENT_REPLIES: '256',
      // For memory experiments: V8 flags for the bridge (e.g. --max-semi-space-size=8).
      ...(process.env.BENCH_BRIDGE_NODE_OPTIONS || opts.nodeOptions
        ? { NODE_OPTIONS: [process.env.BENCH_BRIDGE_NODE_OPTIONS, opts.nodeOptions].filter(Boolean).join(' ') }
        : {}),
      ...(process.env.BENCH_BRIDGE_UNTUNED ? {} : BRIDGE_ENV),
      // For memory experiments: glibc's arena count (read once, at the process's start).
      ...(process.env.BENCH_BRIDGE_MALLOC_ARENA_MAX
        ? { MALLOC_ARENA_MAX: process.env.BENCH_BRIDGE_MALLOC_ARENA_MAX }
        : {}),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
    cwd: dir,
  });
  const logTail: string[] = [];
  let exited: number | null | undefined;
  const exitP = new Promise<number | null>((res) => {
    child.once('exit', (code) => {
      exited = code;
      res(code);
    });
  });
  let partial = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (s: string) => {
    const lines = (partial + s).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) {
      logTail.push(l);
      if (logTail.length > 200) logTail.shift();
    }
  });
  const pid = child.pid ?? -1;
  const base = `http://127.0.0.1:${port}`;

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 20_000);
  let lastBody = '';
  for (;;) {
    if (exited !== undefined) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`bridge exited with ${exited} before ready:\n${logTail.slice(-20).join('\n')}`);
    }
    try {
      const r = await fetch(`${base}/readyz`);
      lastBody = await r.text();
      if (r.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await exitP;
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`bridge not ready in time (last /readyz: ${lastBody}):\n${logTail.slice(-20).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  return {
    pid,
    port,
    dataDir: dir,
    logTail,
    cpuSeconds: () => (cpuMsOf(pid) ?? Number.NaN) / 1000,
    rssMb: () => procStatus(pid, 'VmRSS'),
    peakRssMb: () => procStatus(pid, 'VmHWM'),
    async metrics() {
      const r = await fetch(`${base}/metrics`);
      return r.text();
    },
    async stop() {
      if (exited === undefined) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exitP;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
      return exited ?? null;
    },
  };
}

/** Sum of a Prometheus counter's samples whose labels contain every given pair. */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const lab = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => lab.includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}
