import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { openBridgeStore } from '../../src/bridge-store.js';
import { buildConfig, parseRawEnv } from '../../src/config/config.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/index.js';
import { createLogger } from '../../src/logger.js';
import { type Bridge, buildBridge } from '../../src/main.js';

// The setup the playground's browser tests share: an emulator, a bridge serving the playground
// on this machine (its store in a temporary directory), and Debian's Chromium driven through
// puppeteer-core. Each test file starts one in beforeAll and ends it in afterAll.

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);

/** Chromium, headless, as every browser test launches it. */
export function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

export interface BrowserBridge {
  emulator: Emulator;
  bridge: Bridge;
  browser: Browser;
  /** `http://127.0.0.1:<port>/`. */
  base: string;
  close(): Promise<void>;
}

export interface BrowserBridgeOptions {
  /** Names the temporary directory (the test file's). */
  name: string;
  /** Variables beside the defaults (CHAT_API_URL, key, bot, HOST, PORT, DATABASE_PATH, …). */
  env?: Record<string, string>;
  emulator?: EmulatorOptions;
  /** The page is told the built-in emulator answers (as `npm start` without CHAT_API_URL). */
  builtinEmulator?: boolean;
}

export async function startBrowserBridge(opts: BrowserBridgeOptions): Promise<BrowserBridge> {
  const dir = mkdtempSync(join(tmpdir(), `${opts.name}-`));
  const emulator = await startEmulator(opts.emulator);
  const raw = parseRawEnv({
    CHAT_API_URL: emulator.url,
    CHAT_API_KEY: 'dev-key',
    CHAT_BOT_ID: 'demo-bot',
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_PATH: join(dir, 'bridge.db'),
    STREAM_EDIT_INTERVAL_MS: '100',
    LOG_LEVEL: 'silent',
    ...opts.env,
  });
  const config = buildConfig(raw, { requirePlatform: false });
  const root = createLogger({ level: 'silent' });
  const store = await openBridgeStore(config, root);
  if (store === undefined) throw new Error('no store');
  const bridge = await buildBridge(config, store, root, {
    enabled: true,
    allowRemote: false,
    emulator: opts.builtinEmulator === true,
  });
  await bridge.start();
  const browser = await launchChromium();
  return {
    emulator,
    bridge,
    browser,
    base: `http://127.0.0.1:${bridge.port}/`,
    async close() {
      await browser.close();
      await bridge.shutdown();
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
