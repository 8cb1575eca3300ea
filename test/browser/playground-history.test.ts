import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import { browserBridgePerBlock, haveChromium, sendMessage } from './browser-bridge.js';

// Issue 41 in a real browser, at a desktop width and a phone's: Retry on a failed reply replaces
// it (one message, one answer, also after a reload), and a reply's sources and files are shown
// again after a reload, as are an agent's steps (folded into a list once the reply ended). The
// emulator answers; a fault makes the first attempt fail.

const SHOTS = process.env.PLAYGROUND_SHOTS ?? tmpdir();

/** The log as the reader sees it: each message's role, state and text. */
const LOG = `[...document.querySelectorAll('#log > .msg')].map((e) => [
  e.classList.contains('user') ? 'user' : 'assistant',
  e.getAttribute('data-state'),
  (e.querySelector('.body, .text') || e).textContent.trim(),
])`;

describe.skipIf(!haveChromium)('playground history in a browser (issue 41)', { timeout: 90_000 }, () => {
  const env = browserBridgePerBlock({ name: 'playground-history', env: { USER_MESSAGES_PER_MINUTE: '1000' } });

  /** A page on conversation `id`, closed after `use` whatever happens (a browser holds 4 streams at most). */
  const withPage = async (id: string, width: number, use: (page: Page) => Promise<void>): Promise<void> => {
    const page = await env.browser.newPage();
    try {
      await page.setViewport({ width, height: 800 });
      await page.goto(`${env.base}#${id}`);
      await page.waitForSelector(`body[data-loaded="${id}"]`);
      await use(page);
    } finally {
      await page.close();
    }
  };

  const reload = async (page: Page, id: string): Promise<void> => {
    await page.reload();
    await page.waitForSelector(`body[data-loaded="${id}"]`);
  };

  for (const width of [1280, 390]) {
    for (const fault of [
      { name: 'stream error', fault: { error: 1, times: 1 } },
      { name: 'refusal', fault: { status: 400, times: 1 } },
    ]) {
      it(`at ${width} px: Retry after a ${fault.name} replaces the failed reply, also after a reload`, async () => {
        const id = `retry${fault.name === 'refusal' ? 'r' : 'e'}${width}`;
        await withPage(id, width, async (page) => {
          await sendMessage(page, 'an earlier question');
          await page.waitForSelector('[data-reply][data-state="final"]', { timeout: 20_000 });
          env.emulator.injectFault({ ...fault.fault, endpoint: 'any' });
          await sendMessage(page, 'try me');
          const retry = await page.waitForSelector('[data-reply][data-state="error"] [aria-label="Retry"]', {
            timeout: 20_000,
          });
          await retry?.click();
          await page.waitForFunction(
            "document.querySelectorAll('[data-reply][data-state=\"final\"]').length === 2 && !document.querySelector('[data-pending]')",
            { timeout: 20_000 },
          );
          const want = [
            ['user', 'sent', 'an earlier question'],
            ['assistant', 'final', 'You said: an earlier question'],
            ['user', 'sent', 'try me'],
            ['assistant', 'final', 'You said: try me'],
          ];
          expect(await page.evaluate(LOG)).toEqual(want);
          await page.screenshot({ path: join(SHOTS, `playground-retried-${width}.png`) });
          await reload(page, id);
          expect(await page.evaluate(LOG)).toEqual(want);
        });
      });
    }

    it(`at ${width} px: a reply's sources and files are shown again after a reload`, async () => {
      const id = `kept${width}`;
      await withPage(id, width, async (page) => {
        await sendMessage(page, 'show your work [sources] [file]');
        await page.waitForSelector('[data-reply][data-state="final"] .files a', { timeout: 20_000 });
        const shown = `(() => {
        const e = document.querySelector('[data-reply]');
        return {
          sources: [...e.querySelectorAll('.body a')].map((a) => [a.textContent, a.getAttribute('href')]),
          files: [...e.querySelectorAll('.files a')].map((a) => [a.textContent, a.getAttribute('download'), a.getAttribute('href')]),
        };
      })()`;
        const before = (await page.evaluate(shown)) as { sources: string[][]; files: string[][] };
        expect(before.sources.map((s) => s[1])).toEqual([
          'https://example.com/docs/streaming',
          'https://example.org/weather/paris',
        ]);
        expect(before.files.map((f) => f.slice(0, 2))).toEqual([['table.csv (37 B)', 'table.csv']]);
        expect(before.files[0]?.[2]).toMatch(/^data:text\/csv;base64,/);
        await reload(page, id);
        expect(await page.evaluate(shown)).toEqual(before);
        expect(await page.evaluate(LOG)).toHaveLength(2);
        await page.screenshot({ path: join(SHOTS, `playground-kept-${width}.png`) });
      });
    });

    it(`at ${width} px: an agent reply's steps, folded into a list when it ends, are shown the same after a reload`, async () => {
      const id = `steps${width}`;
      await withPage(id, width, async (page) => {
        await sendMessage(page, 'work it out [steps]');
        await page.waitForSelector('[data-reply][data-state="final"] details.steps', { timeout: 20_000 });
        const steps = `(() => {
        const e = document.querySelector('[data-reply] details.steps');
        return {
          summary: e.querySelector('summary').textContent,
          open: e.open,
          steps: [...e.querySelectorAll('li')].map((li) => [li.textContent, li.getAttribute('data-step')]),
          line: document.querySelector('[data-reply] .step-line').textContent,
        };
      })()`;
        const live = await page.evaluate(steps);
        expect(live).toEqual({
          summary: '2 steps',
          open: false,
          steps: [
            ['Searching the docs', 'done'],
            ['Checking the weather', 'done'],
          ],
          line: '',
        });
        await reload(page, id);
        expect(await page.evaluate(steps)).toEqual(live);
        expect(await page.evaluate(LOG)).toEqual([
          ['user', 'sent', 'work it out [steps]'],
          ['assistant', 'final', 'You said: work it out [steps]'],
        ]);
        // Unfolded by a click, as any disclosure.
        await page.click('[data-reply] details.steps summary');
        expect(await page.$eval('[data-reply] details.steps', (e) => (e as unknown as { open: boolean }).open)).toBe(
          true,
        );
        expect(
          await page.$eval(
            '[data-reply] details.steps li',
            (e) => (e as unknown as { offsetHeight: number }).offsetHeight,
          ),
        ).toBeGreaterThan(0);
        await page.screenshot({ path: join(SHOTS, `playground-steps-kept-${width}.png`) });
      });
    });
  }
});
