import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PlaygroundWorld, startPlayground } from '../integration/playground-http.js';
import { type AttackerSite, haveChromium, launchChromium, startAttackerSite } from './browser-bridge.js';

// Issue 39 in a real browser: cookies ignore ports, so a page on another port of this host can
// set cookies of the playground's names. With a narrower path (`Path=/playground`) the browser
// sends the tossed one first on every API call, and the playground used to take the first one:
// every call failed for good, across reloads. And the page must not be framed by another origin.

const TOSSED_UID = 'AAAAAAAAAAAAAAAAAAAAAA'; // well-formed: a guess the attacker knows

describe.skipIf(!haveChromium)('playground cookies and framing in a browser', () => {
  let w: PlaygroundWorld;
  let browser: Browser | undefined;
  let attacker: AttackerSite | undefined;
  let target = '';
  let evil = '';

  beforeAll(async () => {
    w = await startPlayground({ allowRemote: false });
    target = `http://127.0.0.1:${w.port}`;
    attacker = await startAttackerSite((req, res) => {
      const path = new URL(req.url ?? '/', 'http://attacker').pathname;
      if (path === '/toss') {
        res.writeHead(200, {
          'content-type': 'text/html',
          // Every name the playground uses, narrower path, sent first by the browser from now on.
          'set-cookie': [
            `playground_uid=${TOSSED_UID}; Path=/playground`,
            `__Host-playground_uid=${TOSSED_UID}; Path=/playground; Secure`,
            'playground_auth=tossed; Path=/playground',
            `playground_uid=${TOSSED_UID}; Path=/playground/api`,
          ],
        });
        res.end('<!doctype html><title>cats</title><p>cats</p>');
        return;
      }
      if (path === '/frame') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<!doctype html><title>cats</title><iframe id="f" src="${target}/"></iframe>`);
        return;
      }
      res.writeHead(404).end();
    });
    evil = attacker.url;
    browser = await launchChromium(['--no-first-run']);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await attacker?.close();
    await w?.close();
  });

  const converse = async (page: Page, id: string, text: string): Promise<void> => {
    await page.goto(`${target}/#${id}`);
    await page.waitForSelector(`body[data-loaded="${id}"]`);
    const before = (await page.$$('[data-reply][data-state="final"]')).length;
    await page.type('[aria-label="Message"]', text);
    await page.click('[aria-label="Send"]');
    await page.waitForFunction(`document.querySelectorAll('[data-reply][data-state="final"]').length > ${before}`, {
      timeout: 30_000,
    });
  };

  it('cookies tossed from another port do not break the playground, across reloads, nor take its id', async () => {
    const ctx = await (browser as Browser).createBrowserContext();
    const page = await ctx.newPage();
    await converse(page, 'tossed', 'before the toss');
    const idOf = (jar: { name: string; value: string; path: string }[]) =>
      jar.find((c) => c.name === '__Host-playground_uid' || (c.name === 'playground_uid' && c.path === '/'))?.value;
    const idBefore = idOf(await ctx.cookies());
    expect(idBefore).toMatch(/^[A-Za-z0-9_-]{22}$/);

    const evilPage = await ctx.newPage();
    await evilPage.goto(`${evil}/toss`);
    const jar = await ctx.cookies();
    // The browser took the plain tossed ones (narrower path) and refused the __Host- one.
    expect(jar.filter((c) => c.name === 'playground_uid' && c.value === TOSSED_UID).length).toBeGreaterThan(0);
    expect(jar.filter((c) => c.name === '__Host-playground_uid' && c.value === TOSSED_UID)).toEqual([]);
    await evilPage.close();

    for (let i = 0; i < 2; i++) {
      await page.reload();
      await converse(page, 'tossed', `after the toss ${i}`);
    }
    // The same browser (the same id), the same conversation: its history is still its own.
    expect(idOf(await ctx.cookies())).toBe(idBefore);
    expect(await page.$$eval('[data-reply]', (els) => els.length)).toBeGreaterThanOrEqual(3);
    const before = w.upstreamMessages();
    expect(before).toEqual(expect.arrayContaining(['before the toss', 'after the toss 0', 'after the toss 1']));
    await ctx.close();
  }, 120_000);

  it('another origin cannot frame the page (frame-ancestors none)', async () => {
    const ctx = await (browser as Browser).createBrowserContext();
    const page = await ctx.newPage();
    const blocked = page.waitForResponse((r) => r.url() === `${target}/`);
    await page.goto(`${evil}/frame`);
    const answer = await blocked;
    expect(answer.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    // The frame shows the browser's error page, not the playground: no message box in any frame.
    await page.waitForFunction("document.getElementById('f') !== null");
    for (const f of page.frames()) expect(await f.$('[aria-label="Message"]')).toBeNull();
    await ctx.close();
  }, 60_000);
});
