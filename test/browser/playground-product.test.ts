import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { browserBridgePerBlock, CHROMIUM, haveChromium, openConversation, sendMessage } from './browser-bridge.js';

// The playground as a chat product, in a real browser (Debian's chromium through puppeteer-core,
// as in playground.test.ts), at a desktop width and a phone's: the welcome screen and its prompts,
// the typing indicator and Stop from the moment a message is sent, Escape as Stop, copying a
// message and a code block (through the real clipboard), highlighted code, Retry after a failed
// reply, votes that survive a reload, sending while scrolled up, the icon. Screenshots go to
// $PLAYGROUND_SHOTS (default: the system's temporary directory) for a look at the design.
// Browser-side code is passed as text: this project's TypeScript has no DOM lib.

const inCi = process.env.CI === 'true';
const SHOTS = process.env.PLAYGROUND_SHOTS ?? tmpdir();

describe.runIf(!haveChromium && inCi)('playground product in a browser (CI)', () => {
  it('has chromium to drive', () => {
    expect.fail(`chromium not found at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  });
});

const WIDTHS = [1280, 390] as const;

// A page load and a reply take seconds on a busy machine: a minute and a half per test.
describe.skipIf(!haveChromium)('playground product in a browser', { timeout: 90_000 }, () => {
  // As `npm start` with no CHAT_API_URL: the page is told the built-in emulator answers. One
  // browser sends every message of this file within a minute or two: no per-user limit here.
  const bb = browserBridgePerBlock({
    name: 'playground-product',
    builtinEmulator: true,
    env: { USER_MESSAGES_PER_MINUTE: '1000' },
  });
  beforeAll(() =>
    bb.browser
      .defaultBrowserContext()
      .overridePermissions(new URL(bb.base).origin, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']),
  );

  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `playground-${name}.png`) });

  const clipboard = async (page: Page): Promise<string> => {
    await page.bringToFront();
    return (await page.evaluate('navigator.clipboard.readText()')) as string;
  };

  for (const width of WIDTHS) {
    describe(`at ${width} px`, () => {
      it('an empty conversation shows a welcome screen; a suggested prompt sends itself and gets a reply', async () => {
        const page = await openConversation(bb.browser, bb.base, `welcome${width}`, width);
        await page.waitForSelector('#welcome:not([hidden])');
        // The built-in emulator answers: its commands are the prompts, its hint is shown.
        const prompts = await page.$$eval('#prompts button', (bs) => bs.map((b) => b.textContent));
        expect(prompts.length).toBeGreaterThanOrEqual(3);
        expect(prompts.join(' ')).toContain('[table 5]');
        if (width > 700)
          expect(await page.$eval('#emulator-hint', (e) => (e as unknown as { hidden: boolean }).hidden)).toBe(false);
        await shot(page, `welcome-${width}`);
        const overflow = await page.evaluate('document.documentElement.scrollWidth');
        expect(overflow).toBe(width);
        // Every prompt whole within the window (a long one is cut with an ellipsis, not by the edge).
        const rights = await page.$$eval('#prompts button', (bs) => bs.map((b) => b.getBoundingClientRect().right));
        for (const r of rights) expect(r).toBeLessThanOrEqual(width);

        await page.click('#prompts button:first-child');
        await page.waitForSelector('[data-reply][data-state="final"] table', { timeout: 20_000 });
        expect(await page.$eval('#welcome', (e) => (e as unknown as { hidden: boolean }).hidden)).toBe(true);
        expect(await page.$eval('.msg.user .text', (e) => e.textContent)).toBe('A table, please [table 5] [cols 4]');
        await page.close();
      });

      it('the typing indicator and Stop show from the send, before the first word arrives', async () => {
        const page = await openConversation(bb.browser, bb.base, `typing${width}`, width);
        // Seen on every change of the page from before the send (a busy machine may be slow to
        // look): the typing indicator with its Stop while no reply exists yet.
        await page.evaluate(`window.early = false;
          new MutationObserver(() => {
            if (document.querySelector('[data-pending] .typing') && document.querySelector('[data-pending] [aria-label="Stop"]')
              && !document.querySelector('[data-reply]')) window.early = true;
          }).observe(document.body, { subtree: true, childList: true, attributes: true })`);
        // One chunk, after 3 s: nothing of the reply exists until then.
        await sendMessage(page, 'slow to start [chunks 1] [delay 3000]');
        await page.waitForFunction('window.early === true');
        await shot(page, `typing-${width}`);
        await page.waitForSelector('[data-reply][data-state="final"]', { timeout: 20_000 });
        expect(await page.$$('[data-pending]')).toHaveLength(0);
        expect(await page.$eval('[data-reply] .body', (e) => e.textContent)).toBe(
          'You said: slow to start [chunks 1] [delay 3000]',
        );
        await page.close();
      });

      it('Escape stops a reply before its first word, and one that streams', async () => {
        const page = await openConversation(bb.browser, bb.base, `escape${width}`, width);
        await sendMessage(page, 'never mind [chunks 1] [delay 20000]');
        await page.waitForSelector('[data-pending][data-turn]');
        await page.keyboard.press('Escape');
        // Stopped before a word: said where the reply would have been; no reply text comes.
        await page.waitForSelector('[data-ended="stopped"], [data-reply][data-state="stopped"]', { timeout: 20_000 });
        expect(await page.$$('[data-pending]')).toHaveLength(0);
        expect(await page.$('[data-reply][data-state="final"]')).toBeNull();

        await sendMessage(page, 'go on [long 3000] [chunks 100] [delay 200]');
        await page.waitForSelector('[data-reply][data-state="streaming"] [aria-label="Stop"]', { timeout: 20_000 });
        await page.keyboard.press('Escape');
        await page.waitForSelector('[data-reply][data-state="stopped"]', { timeout: 20_000 });
        // One word of it: the bridge's note in the text, no second label beside it.
        const stopped = await page.$eval('[data-reply][data-state="stopped"]', (e) => ({
          text: e.querySelector('.body')?.textContent ?? '',
          badge: e.querySelector('.badge')?.textContent ?? '',
        }));
        expect(stopped.text).toMatch(/\(stopped\)$/);
        expect(stopped.badge).toBe('');
        expect(await page.$('[data-reply][data-state="stopped"] [aria-label="Retry"]')).not.toBeNull();
        await page.close();
      });

      it('copy buttons copy a message and a code block; code is highlighted', async () => {
        const page = await openConversation(bb.browser, bb.base, `copy${width}`, width);
        await sendMessage(page, 'code:\n\n```ts\nconst answer = 42; // the answer\nconsole.log("hi");\n```');
        await page.waitForSelector('[data-reply][data-state="final"] .code-block', { timeout: 20_000 });
        const tokens = await page.$$eval('[data-reply] pre code span', (spans) =>
          spans.map((s) => [s.className, s.textContent]),
        );
        expect(tokens).toEqual(
          expect.arrayContaining([
            ['tok-k', 'const'],
            ['tok-n', '42'],
            ['tok-c', '// the answer'],
            ['tok-s', '"hi"'],
            ['tok-f', 'log'],
          ]),
        );
        expect(await page.$eval('[data-reply] .code-head', (e) => e.getAttribute('data-lang'))).toBe('ts');
        await shot(page, `code-${width}`);

        await page.click('[data-reply] [aria-label="Copy code"]');
        await page.waitForSelector('[data-reply] [aria-label="Copy code"][data-copied]');
        expect(await clipboard(page)).toBe('const answer = 42; // the answer\nconsole.log("hi");\n');

        await page.click('[data-reply] .controls [aria-label="Copy message"]');
        await page.waitForFunction("document.getElementById('status').textContent === 'Copied to the clipboard.'");
        expect(await clipboard(page)).toBe(
          'You said: code:\n\n```ts\nconst answer = 42; // the answer\nconsole.log("hi");\n```',
        );
        await page.close();
      });

      it('Retry after a failed reply sends the message again and gets a reply', async () => {
        const page = await openConversation(bb.browser, bb.base, `retry${width}`, width);
        // The upstream refuses the next request once (400: the bridge does not retry it itself).
        bb.emulator.injectFault({ status: 400, times: 1, endpoint: 'any' });
        await sendMessage(page, 'try me');
        const retry = await page.waitForSelector('[data-reply][data-state="error"] [aria-label="Retry"]', {
          timeout: 20_000,
        });
        await shot(page, `failed-${width}`);
        await retry?.click();
        await page.waitForSelector('[data-reply][data-state="final"]', { timeout: 20_000 });
        const log = await page.$$eval('#log > .msg', (els) =>
          els.map((e) => [e.getAttribute('data-state'), e.querySelector('.body, .text')?.textContent]),
        );
        expect(log.at(-2)).toEqual(['sent', 'try me']);
        expect(log.at(-1)).toEqual(['final', 'You said: try me']);
        await page.close();
      });

      it('a vote is shown again after a reload', async () => {
        const page = await openConversation(bb.browser, bb.base, `vote${width}`, width);
        await sendMessage(page, 'rate me');
        const down = await page.waitForSelector('[data-reply][data-state="final"] [aria-label="Bad reply"]', {
          timeout: 20_000,
        });
        // An icon, named for assistive tools, not an emoji.
        expect(await down?.evaluate((e) => [e.querySelector('svg') !== null, e.textContent])).toEqual([true, '']);
        await down?.click();
        await page.waitForSelector('[aria-label="Bad reply"][aria-pressed="true"]');
        await page.reload();
        await page.waitForSelector(`body[data-loaded="vote${width}"] [aria-label="Bad reply"][aria-pressed="true"]`);
        expect(await page.$eval('[aria-label="Good reply"]', (e) => e.getAttribute('aria-pressed'))).toBe('false');
        await page.close();
      });

      it('sending while scrolled up brings the log down to the new message', async () => {
        const page = await openConversation(bb.browser, bb.base, `scroll${width}`, width);
        await sendMessage(page, '[long 5000] [chunks 10]');
        await page.waitForFunction(
          "[...document.querySelectorAll('[data-reply]')].length >= 2 && [...document.querySelectorAll('[data-reply]')].every((e) => e.dataset.state === 'final')",
          { timeout: 20_000 },
        );
        await page.evaluate("document.getElementById('log').scrollTop = 0");
        await sendMessage(page, 'down here');
        await page.waitForFunction(
          "(() => { const l = document.getElementById('log'); return l.scrollHeight - l.scrollTop - l.clientHeight < 48; })()",
        );
        const visible = await page.evaluate(`(() => {
          const els = document.querySelectorAll('.msg.user');
          const r = els[els.length - 1].getBoundingClientRect();
          const l = document.getElementById('log').getBoundingClientRect();
          return r.top >= l.top && r.bottom <= l.bottom;
        })()`);
        expect(visible).toBe(true);
        await page.waitForSelector('[data-reply][data-state="final"]:last-of-type', { timeout: 20_000 });
        await shot(page, `conversation-${width}`);
        await page.close();
      });
    });
  }

  it('a reload before the first word shows the typing indicator again, and its Stop still stops', async () => {
    const page = await openConversation(bb.browser, bb.base, 'reloadtyping', 1280);
    await sendMessage(page, 'patience [chunks 1] [delay 30000]');
    await page.waitForSelector('[data-pending][data-turn]');
    await page.reload();
    await page.waitForSelector('body[data-loaded="reloadtyping"] [data-pending][data-turn] .typing');
    expect(await page.$eval('.msg.user .text', (e) => e.textContent)).toBe('patience [chunks 1] [delay 30000]');
    await page.click('[data-pending] [aria-label="Stop"]');
    await page.waitForSelector('[data-reply][data-state="stopped"]', { timeout: 20_000 });
    expect(await page.$$('[data-pending]')).toHaveLength(0);
    await page.close();
  });

  it('the icon: /favicon.ico and the one the page names answer 200', async () => {
    for (const path of ['favicon.ico', 'playground/icon.svg']) {
      const r = await fetch(bb.base + path);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('image/svg+xml');
      expect(await r.text()).toMatch(/^<svg /);
    }
    const page = await openConversation(bb.browser, bb.base, 'icon', 1280);
    expect(await page.$eval('link[rel="icon"]', (e) => e.getAttribute('href'))).toBe('/playground/icon.svg');
    await page.close();
  });
});
