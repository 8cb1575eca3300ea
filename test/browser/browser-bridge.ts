import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import puppeteer, { type Browser, type BrowserContext, type Page } from 'puppeteer-core';
import { afterAll, beforeAll } from 'vitest';
import type { Emulator, EmulatorOptions } from '../../src/emulator/index.js';
import type { Bridge } from '../../src/main.js';
import { startPlayground } from '../integration/playground-http.js';

// The setup the playground's browser tests share: the playground on this machine as the HTTP
// tests start it (test/integration/playground-http.ts), and Debian's Chromium driven through
// puppeteer-core. Each test file starts one in beforeAll and ends it in afterAll.

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);

/** Chromium, headless, as every browser test launches it (with `extraArgs` a test is about). */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', ...extraArgs],
  });
}

/** Another origin on this machine (another port of 127.0.0.1): the pages an attacker serves. */
export interface AttackerSite {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  close(): Promise<void>;
}

export async function startAttackerSite(
  serve: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<AttackerSite> {
  const server = createServer(serve);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
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
  const world = await startPlayground(
    { allowRemote: false, emulator: opts.builtinEmulator === true },
    { STREAM_EDIT_INTERVAL_MS: '100', ...opts.env },
    { name: opts.name, ...(opts.emulator !== undefined ? { emulator: opts.emulator } : {}) },
  );
  const browser = await launchChromium();
  return {
    emulator: world.emulator,
    bridge: world.bridge,
    browser,
    base: `http://127.0.0.1:${world.port}/`,
    async close() {
      await browser.close();
      await world.close();
    },
  };
}

/**
 * Starts a browser bridge before a describe block's tests and closes it after them; its fields
 * are there once the block's beforeAll ran.
 */
export function browserBridgePerBlock(opts: BrowserBridgeOptions): BrowserBridge {
  const block = {} as BrowserBridge;
  beforeAll(async () => {
    Object.assign(block, await startBrowserBridge(opts));
  }, 60_000);
  afterAll(() => block.close?.());
  return block;
}

/** A new tab on conversation `id` of the playground at `base` (`width` wide, 800 high), once the page loaded it. */
export async function openConversation(
  browser: Browser | BrowserContext,
  base: string,
  id: string,
  width: number,
): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewport({ width, height: 800 });
  await page.goto(`${base}#${id}`);
  await page.waitForSelector(`body[data-loaded="${id}"]`);
  return page;
}

/** Sends `text` as the page's user does, the tab in front (new lines included: the value is set, then Send is clicked). */
export async function sendMessage(page: Page, text: string): Promise<void> {
  await page.bringToFront();
  await page.$eval('[aria-label="Message"]', (el, t) => ((el as unknown as { value: string }).value = t), text);
  await page.click('[aria-label="Send"]');
}
