import { get } from 'node:http';
import { relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import WebSocket from 'ws';
import { startEmulator } from '../../src/emulator/index.js';
import { replyText } from '../../src/emulator/replies.js';
import { BENCH_API_KEY, metricSum, startBridge, upstreamEnv } from '../../bench/bridge-process.js';
import { discordRig, type Platform, slackRig } from '../../bench/rigs.js';
import { freePort } from '../fakes/free-port.js';
import { playgroundRig } from './playground-rig.js';

// Which of the project's source files one message runs, measured in the real bridge: a child
// process (`node dist/cli.js start`) between the emulator and a loopback fake platform (or its own
// playground, driven over HTTP as its page drives it: playground-rig.ts), under
// V8's precise coverage (function call counts, through the inspector protocol). Background work
// (heartbeats, sweeps, the metrics scrapes this measurement itself makes) is subtracted: the same
// scrapes over idle windows of the same length are counted too, and a function is on the
// message's path only when the message window called it more often than every idle window.

interface CoverageFunction {
  functionName: string;
  ranges: { startOffset: number; endOffset: number; count: number }[];
}
interface ScriptCoverage {
  url: string;
  functions: CoverageFunction[];
}

/** A tiny Chrome DevTools Protocol client over the inspector's WebSocket. */
class Inspector {
  private next = 1;
  private readonly waiting = new Map<number, (v: unknown) => void>();
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const msg = JSON.parse(data.toString()) as { id?: number; result?: unknown };
      if (msg.id === undefined) return;
      this.waiting.get(msg.id)?.(msg.result);
      this.waiting.delete(msg.id);
    });
  }

  static async connect(port: number): Promise<Inspector> {
    const list = await new Promise<string>((res, rej) => {
      get({ host: '127.0.0.1', port, path: '/json/list' }, (r) => {
        let body = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => (body += c));
        r.on('end', () => res(body));
      }).on('error', rej);
    });
    const [target] = JSON.parse(list) as { webSocketDebuggerUrl: string }[];
    if (!target) throw new Error('the bridge has no inspector target');
    const ws = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise<void>((res, rej) => {
      ws.once('open', () => res());
      ws.once('error', rej);
    });
    return new Inspector(ws);
  }

  call<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.next++;
    return new Promise<T>((res) => {
      this.waiting.set(id, (v) => res(v as T));
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  close(): void {
    this.ws.close();
  }
}

/** Call counts by function (`url|name|start`) since the last take, which resets them. */
async function takeCounts(insp: Inspector, root: string): Promise<Map<string, number>> {
  const { result } = await insp.call<{ result: ScriptCoverage[] }>('Profiler.takePreciseCoverage');
  const counts = new Map<string, number>();
  const dist = `${pathToFileURL(resolve(root, 'dist')).href}/`;
  for (const script of result) {
    if (!script.url.startsWith(dist)) continue;
    for (const fn of script.functions) {
      const r = fn.ranges[0];
      if (r && r.count > 0) counts.set(`${script.url}|${fn.functionName}|${r.startOffset}`, r.count);
    }
  }
  return counts;
}

/** `file:///…/dist/core/x.js` → `src/core/x.ts`. */
function sourceOf(url: string, root: string): string {
  const path = relative(resolve(root, 'dist'), fileURLToPath(url));
  return `src/${path.replace(/\.js$/, '.ts')}`.split(sep).join('/');
}

/** Where the measured message is written: a platform's fake, or the bridge's own playground. */
export type PathPlatform = Platform | 'playground';

export interface PathMeasurement {
  platform: PathPlatform;
  /** Source files the message ran code in, sorted. */
  files: string[];
  /** The message window (ms), also the idle window's length. */
  windowMs: number;
}

const until = async (ok: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** What measurePath drives: a platform's fake, or the playground through its page's HTTP calls. */
interface PathRig {
  env: Record<string, string>;
  /** Once the bridge listens on `port`: anything to do before the first message. */
  ready(port: number): Promise<void>;
  /** What comes before a message in place `i` and is not the message (the page opening a conversation). */
  open(i: number): Promise<void>;
  /** Sends a message in place `i`; the answer says whether its reply shows `expected` (in full). */
  send(i: number, tag: string, text: string): Promise<(expected: string) => boolean>;
  close(): Promise<void>;
}

async function rigFor(platform: PathPlatform): Promise<PathRig> {
  if (platform === 'playground') {
    const pg = playgroundRig();
    // No platform configured: PLAYGROUND=auto serves it, the emulator (CHAT_API_URL) answers.
    return {
      env: { PLAYGROUND: 'auto' },
      ready: (port) => pg.load(port),
      open: (i) => pg.open(i),
      send: async (i, tag, text) => {
        const h = await pg.send(i, tag, text);
        return (expected) => pg.exact(h, expected);
      },
      close: () => pg.close(),
    };
  }
  const rig = platform === 'slack' ? await slackRig({ channels: 2 }) : await discordRig({ channels: 2 });
  return {
    env: rig.env,
    ready: () => Promise.resolve(),
    open: () => Promise.resolve(),
    send: async (i, tag, text) => {
      const h = await rig.send(i, tag, text);
      return (expected) => rig.exact(h, expected);
    },
    close: () => rig.close(),
  };
}

/**
 * One message through the real bridge on `platform`, after one warm-up message in another
 * place (so what every message runs is measured, not what only the process's first one does).
 */
export async function measurePath(platform: PathPlatform, root = process.cwd()): Promise<PathMeasurement> {
  const emu = await startEmulator({ port: 0, apiKey: BENCH_API_KEY, bots: ['demo-bot'], chunkDelayMs: 5 });
  const rig = await rigFor(platform);
  const inspectPort = await freePort();
  const bridge = await startBridge(
    { ...upstreamEnv(emu.url), ...rig.env, NODE_OPTIONS: `--inspect=127.0.0.1:${inspectPort}` },
    { readyTimeoutMs: 60_000 },
  );
  const insp = await Inspector.connect(inspectPort);
  try {
    await insp.call('Profiler.enable');
    await insp.call('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    const text = 'walk';
    const finished = async () => metricSum(await bridge.metrics(), 'bridge_replies_finished_total');

    await rig.ready(bridge.port);
    await rig.open(0);
    const warm = await rig.send(0, 'warm', text);
    await until(() => warm(replyText(`bench-warm ${text}`)), 30_000, 'the warm-up reply');
    await until(async () => (await finished()) === 1, 30_000, 'the warm-up reply to finish');
    await rig.open(1);

    await takeCounts(insp, root);
    const start = Date.now();
    const h = await rig.send(1, 'path', text);
    await until(() => h(replyText(`bench-path ${text}`)), 30_000, 'the measured reply');
    let scrapes = 0;
    await until(
      async () => {
        scrapes += 1;
        return (await finished()) === 2;
      },
      30_000,
      'the measured reply to finish',
    );
    const message = await takeCounts(insp, root);
    const windowMs = Date.now() - start;

    // Three idle windows as long as the message's, each with the same scrapes: a function is on
    // the message's path when the message window called it more often than any idle window did,
    // so a timer that fires about once a window is subtracted whichever window it fell in.
    const idles: Map<string, number>[] = [];
    for (let w = 0; w < 3; w++) {
      const idleStart = Date.now();
      for (let i = 0; i < scrapes; i++) await finished();
      const rest = windowMs - (Date.now() - idleStart);
      if (rest > 0) await new Promise((r) => setTimeout(r, rest));
      idles.push(await takeCounts(insp, root));
    }

    const files = new Set<string>();
    for (const [key, n] of message) {
      if (idles.every((idle) => n > (idle.get(key) ?? 0))) files.add(sourceOf(key.split('|')[0] ?? '', root));
    }
    return { platform, files: [...files].sort(), windowMs };
  } finally {
    insp.close();
    await bridge.stop();
    await rig.close();
    await emu.close();
  }
}
