import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBridgeStore } from '../../src/bridge-store.js';
import { buildConfig, parseRawEnv } from '../../src/config/config.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { createLogger } from '../../src/logger.js';
import { type Bridge, buildBridge } from '../../src/main.js';

// The playground's bot picker: when BOT_ROUTES names bots besides CHAT_BOT_ID, the page offers
// them, and a conversation's messages go to the bot picked for it (the upstream says which it
// got), also after a reload of the page. Real emulator, real bridge, real Chromium.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);

describe.skipIf(!haveChromium)('playground bot picker in a browser', { timeout: 90_000 }, () => {
  let emulator: Emulator | undefined;
  let bridge: Bridge | undefined;
  let browser: Browser | undefined;
  let base = '';
  let dir = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'playground-bots-'));
    emulator = await startEmulator({ bots: ['demo-bot', 'support-bot'] });
    const raw = parseRawEnv({
      CHAT_API_URL: emulator.url,
      CHAT_API_KEY: 'dev-key',
      CHAT_BOT_ID: 'demo-bot',
      BOT_ROUTES: 'slack:T1=support-bot',
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_PATH: join(dir, 'bridge.db'),
      STREAM_EDIT_INTERVAL_MS: '100',
      LOG_LEVEL: 'silent',
    });
    const config = buildConfig(raw, { requirePlatform: false });
    const root = createLogger({ level: 'silent' });
    const store = await openBridgeStore(config, root);
    if (store === undefined) throw new Error('no store');
    bridge = await buildBridge(config, store, root, { enabled: true, allowRemote: false, emulator: false });
    await bridge.start();
    base = `http://127.0.0.1:${bridge.port}/`;
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await bridge?.shutdown();
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const botsAsked = (message: string) =>
    (emulator as Emulator).requests.filter((r) => r.message === message).map((r) => r.botId);

  for (const width of [1280, 390]) {
    it(`at ${width} px: the routes' bots are offered; the one picked answers the conversation`, async () => {
      const page = await (browser as Browser).newPage();
      await page.setViewport({ width, height: 800 });
      const id = `bots${width}`;
      await page.goto(`${base}#${id}`);
      await page.waitForSelector(`body[data-loaded="${id}"] [aria-label="Bot"]`, { visible: true });
      expect(await page.$$eval('[aria-label="Bot"] option', (os) => os.map((o) => o.textContent))).toEqual([
        'demo-bot',
        'support-bot',
      ]);
      expect(await page.$eval('[aria-label="Bot"]', (s) => (s as unknown as { value: string }).value)).toBe('demo-bot');
      const r = await page.$eval('[aria-label="Bot"]', (e) => e.getBoundingClientRect().right);
      expect(r).toBeLessThanOrEqual(width);

      await page.select('[aria-label="Bot"]', 'support-bot');
      const text = `which bot ${width}`;
      await page.$eval('[aria-label="Message"]', (el, t) => ((el as unknown as { value: string }).value = t), text);
      await page.click('[aria-label="Send"]');
      await page.waitForSelector('[data-reply][data-state="final"]', { timeout: 20_000 });
      expect(botsAsked(text)).toContain('support-bot');
      expect(botsAsked(text)).not.toContain('demo-bot');

      // The pick is kept with the conversation: after a reload it is still the one asked.
      await page.reload();
      await page.waitForSelector(`body[data-loaded="${id}"]`);
      expect(await page.$eval('[aria-label="Bot"]', (s) => (s as unknown as { value: string }).value)).toBe(
        'support-bot',
      );
      await page.close();
    });
  }
});
