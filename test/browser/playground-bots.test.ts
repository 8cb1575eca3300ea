import { describe, expect, it } from 'vitest';
import { browserBridgePerBlock, haveChromium } from './browser-bridge.js';

// The playground's bot picker: when BOT_ROUTES names bots besides CHAT_BOT_ID, the page offers
// them, and a conversation's messages go to the bot picked for it (the upstream says which it
// got), also after a reload of the page. Real emulator, real bridge, real Chromium.

describe.skipIf(!haveChromium)('playground bot picker in a browser', { timeout: 90_000 }, () => {
  const bb = browserBridgePerBlock({
    name: 'playground-bots',
    emulator: { bots: ['demo-bot', 'support-bot'] },
    env: { BOT_ROUTES: 'slack:T1=support-bot' },
  });

  const botsAsked = (message: string) => bb.emulator.requests.filter((r) => r.message === message).map((r) => r.botId);

  for (const width of [1280, 390]) {
    it(`at ${width} px: the routes' bots are offered; the one picked answers the conversation`, async () => {
      const page = await bb.browser.newPage();
      await page.setViewport({ width, height: 800 });
      const id = `bots${width}`;
      await page.goto(`${bb.base}#${id}`);
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
