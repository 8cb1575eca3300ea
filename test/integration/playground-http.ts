import { mkdtempSync, rmSync } from 'node:fs';
import { type IncomingHttpHeaders, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { openBridgeStore } from '../../src/bridge-store.js';
import { buildConfig, parseRawEnv } from '../../src/config/config.js';
import type { PlaygroundPlan } from '../../src/config/start-config.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/index.js';
import { createLogger } from '../../src/logger.js';
import { type Bridge, buildBridge } from '../../src/main.js';

// A bridge running the playground against the emulator, and a plain HTTP client that sets any
// header (Host, Origin, Cookie): what a hostile page or a rebinding DNS name would send.

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export function call(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** A browser session: its id cookie and the token its page carries. */
export interface Session {
  cookie: string;
  token: string;
  host: string;
  origin: string;
}

export async function openPage(port: number, extra: Record<string, string> = {}): Promise<Session> {
  const host = `127.0.0.1:${port}`;
  const page = await call(port, 'GET', '/', { host, ...extra });
  if (page.status !== 200) throw new Error(`page: ${page.status} ${page.body}`);
  const set = [page.headers['set-cookie'] ?? []].flat();
  const uid = set.map((c) => /^playground_uid=([^;]+)/.exec(c)?.[1]).find((v) => v !== undefined);
  const token = /<meta name="playground-token" content="([^"]+)">/.exec(page.body)?.[1];
  if (uid === undefined || token === undefined) throw new Error('the page set no id cookie or carried no token');
  const cookie = [extra.cookie, `playground_uid=${uid}`].filter(Boolean).join('; ');
  return { cookie, token, host, origin: `http://${host}` };
}

/** The headers the real page sends on a write. */
export function pageHeaders(s: Session): Record<string, string> {
  return {
    host: s.host,
    origin: s.origin,
    cookie: s.cookie,
    'content-type': 'application/json',
    'x-playground-token': s.token,
  };
}

export function post(port: number, path: string, headers: Record<string, string>, body: unknown): Promise<Answer> {
  return call(port, 'POST', `/playground/api/${path}`, headers, JSON.stringify(body));
}

/** An open event stream: its events as they come, and a way to wait for one. */
export interface EventStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body of a refusal (not 200). */
  body: string;
  events: { event: string; data: unknown }[];
  ended: Promise<void>;
  next(
    pred: (e: { event: string; data: unknown }) => boolean,
    timeoutMs?: number,
  ): Promise<{ event: string; data: unknown }>;
  close(): void;
}

export function openEvents(port: number, path: string, headers: Record<string, string>): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'GET', path, headers }, (res) => {
      const events: { event: string; data: unknown }[] = [];
      const waiters = new Set<() => void>();
      let buf = '';
      let body = '';
      const ended = new Promise<void>((r) => res.on('close', () => r()));
      res.on('data', (c: Buffer) => {
        const text = c.toString('utf8');
        if (res.statusCode !== 200) body += text;
        buf += text;
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) as unknown });
        }
        for (const w of [...waiters]) w();
      });
      void ended.then(() => {
        for (const w of [...waiters]) w();
      });
      const stream: EventStream = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        body: '',
        events,
        ended,
        next(pred, timeoutMs = 20_000) {
          return new Promise((ok, fail) => {
            let seen = 0;
            const check = () => {
              for (; seen < events.length; seen++) {
                const e = events[seen];
                if (e !== undefined && pred(e)) {
                  waiters.delete(check);
                  clearTimeout(timer);
                  ok(e);
                  return;
                }
              }
              if (res.closed) {
                waiters.delete(check);
                clearTimeout(timer);
                fail(new Error(`the stream ended without the event (${body || JSON.stringify(events)})`));
              }
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`no such event in ${timeoutMs} ms: ${JSON.stringify(events)}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          });
        },
        close: () => req.destroy(),
      };
      if (res.statusCode !== 200) res.on('end', () => resolve({ ...stream, body }));
      else resolve(stream);
    });
    req.on('error', reject);
    req.end();
  });
}

export interface PlaygroundWorld {
  bridge: Bridge;
  emulator: Emulator;
  port: number;
  /** Chat requests the upstream received (send and stream). */
  upstreamMessages(): string[];
  close(): Promise<void>;
}

/** What a test may share between two bridges (a restart) or watch (the log). */
export interface PlaygroundWorldOptions {
  /** The database's folder and the upstream, kept when the bridge closes (a restart reuses them). */
  reuse?: { dir: string; emulator: Emulator };
  /** Every log line (JSON), at debug and above. */
  log?: string[];
  /** Names the temporary directory (the test file's). */
  name?: string;
  /** The emulator's options (without `reuse`). */
  emulator?: EmulatorOptions;
}

/**
 * A bridge serving the playground on this machine against the emulator, its store in a temporary
 * directory. `env` (beside the defaults: the emulator, its key and bot, HOST, PORT, the database,
 * …) may be made from the emulator; `plan.emulator` tells the page the built-in emulator answers.
 */
export async function startPlayground(
  plan: Omit<PlaygroundPlan, 'enabled' | 'emulator'> & { emulator?: boolean },
  env: Record<string, string> | ((emulator: Emulator) => Record<string, string>) = {},
  opts: PlaygroundWorldOptions = {},
): Promise<PlaygroundWorld> {
  const dir = opts.reuse?.dir ?? mkdtempSync(join(tmpdir(), `${opts.name ?? 'playground-guard'}-`));
  const emulator = opts.reuse?.emulator ?? (await startEmulator(opts.emulator));
  const raw = parseRawEnv({
    CHAT_API_URL: emulator.url,
    CHAT_API_KEY: 'dev-key',
    CHAT_BOT_ID: 'demo-bot',
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_PATH: join(dir, 'bridge.db'),
    STREAM_EDIT_INTERVAL_MS: '50',
    LOG_LEVEL: 'silent',
    ...(typeof env === 'function' ? env(emulator) : env),
  });
  const config = buildConfig(raw, { requirePlatform: false });
  const lines = opts.log;
  const root =
    lines === undefined
      ? createLogger({ level: 'silent' })
      : createLogger({ level: 'debug', format: 'json', destination: { write: (s: string) => lines.push(s) } });
  const store = await openBridgeStore(config, root);
  if (store === undefined) throw new Error('no store');
  const bridge = await buildBridge(config, store, root, { enabled: true, emulator: false, ...plan });
  await bridge.start();
  const port = bridge.port;
  if (port === undefined) throw new Error('not listening');
  return {
    bridge,
    emulator,
    port,
    upstreamMessages: () => emulator.requests.filter((r) => r.message !== undefined).map((r) => r.message ?? ''),
    async close() {
      await bridge.shutdown();
      if (opts.reuse !== undefined) return;
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The page's event stream of `conversation` as session `s` opens it (EventSource: the token in the query). */
export function conversationEvents(port: number, s: Session, conversation: string): Promise<EventStream> {
  const query = `conversation=${conversation}&page_token=${encodeURIComponent(s.token)}`;
  return openEvents(port, `/playground/events?${query}`, { host: s.host, cookie: s.cookie });
}

/** A describe block's playground and a page opened on it (`w` and `s` once its beforeAll ran). */
export interface PlaygroundBlock {
  w: PlaygroundWorld;
  s: Session;
}

/** Starts a playground and opens its page before a describe block's tests; closes it after them. */
export function playgroundPerBlock(
  plan: Omit<PlaygroundPlan, 'enabled' | 'emulator'>,
  env: Record<string, string> = {},
): PlaygroundBlock {
  const block = {} as PlaygroundBlock;
  beforeAll(async () => {
    block.w = await startPlayground(plan, env);
    block.s = await openPage(block.w.port);
  }, 60_000);
  afterAll(() => block.w?.close());
  return block;
}
