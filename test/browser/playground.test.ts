import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserBridge, CHROMIUM, haveChromium, startBrowserBridge } from './browser-bridge.js';

// The playground in a real browser: Debian's chromium (CHROMIUM_PATH or /usr/bin/chromium),
// driven by puppeteer-core; nothing downloads a browser. Without chromium the tests are skipped on
// a workstation and fail in CI (CI=true), where .ci/run installs it.

const inCi = process.env.CI === 'true';

/** One sample of the newest reply, taken on every DOM change (polling: 'mutation'). */
interface Sample {
  state: string;
  length: number;
  at: number;
}

const SAMPLE_NEWEST_REPLY = `(() => {
  const all = document.querySelectorAll('[data-reply]');
  const el = all[all.length - 1];
  if (!el) return false;
  const state = el.dataset.state || '';
  const body = el.querySelector('.body');
  (window.samples = window.samples || []).push({ state, length: body ? body.textContent.length : 0, at: Date.now() });
  return state !== 'streaming';
})()`;

// In CI a missing browser is a failure, counted as one, not a silent skip.
describe.runIf(!haveChromium && inCi)('playground in a browser (CI)', () => {
  it('has chromium to drive', () => {
    expect.fail(`chromium not found at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  });
});

describe.skipIf(!haveChromium)('playground in a browser', () => {
  let env: BrowserBridge | undefined;
  let browser: Browser | undefined;
  let base = '';

  beforeAll(async () => {
    env = await startBrowserBridge({ name: 'playground' });
    ({ browser, base } = env);
  }, 60_000);

  afterAll(async () => {
    await env?.close();
  });

  const openConversation = async (id: string): Promise<Page> => {
    const page = await (browser as Browser).newPage();
    await page.goto(`${base}#${id}`);
    await page.waitForSelector(`body[data-loaded="${id}"]`);
    return page;
  };

  const send = async (page: Page, text: string): Promise<void> => {
    await page.bringToFront(); // keys go to the tab in front
    await page.type('[aria-label="Message"]', text);
    await page.click('[aria-label="Send"]');
  };

  /** Samples the newest reply on every change until it is no longer streaming. */
  const followReply = async (page: Page): Promise<Sample[]> => {
    await page.waitForSelector('[data-reply]');
    // Browser-side code as text: this project's TypeScript has no DOM library.
    await page.waitForFunction(SAMPLE_NEWEST_REPLY, { polling: 'mutation', timeout: 30_000 });
    return (await page.evaluate('window.samples')) as Sample[];
  };

  const replyBodies = (page: Page) =>
    page.$$eval('[data-reply]', (els) => els.map((e) => e.querySelector('.body')?.textContent ?? ''));

  it('streams a reply edit by edit, ends final, and shows it again after a reload', async () => {
    const page = await openConversation('streamone');
    await send(page, 'hello [long 1500] [chunks 15] [delay 150]');
    const samples = await followReply(page);
    const streaming = samples.filter((s) => s.state === 'streaming').map((s) => s.length);
    expect(new Set(streaming).size).toBeGreaterThanOrEqual(2); // the text grew while streaming
    expect(streaming).toEqual([...streaming].sort((a, b) => a - b));
    expect(samples.at(-1)?.state).toBe('final');
    const before = await replyBodies(page);
    expect(before[0]?.length).toBeGreaterThan(streaming[0] ?? 0);
    expect(await page.$('[data-reply] [aria-label="Stop"]')).toBeNull();

    await page.reload();
    await page.waitForSelector('body[data-loaded="streamone"] [data-reply][data-state="final"]');
    expect(await replyBodies(page)).toEqual(before);
    expect(await page.$eval('.msg.user', (e) => e.textContent)).toBe('hello [long 1500] [chunks 15] [delay 150]');
    await page.close();
  });

  it('Stop stops a long reply', async () => {
    const page = await openConversation('stopone');
    await send(page, '[long 3000] [chunks 100] [delay 200]');
    const stop = await page.waitForSelector('[data-reply][data-state="streaming"] [aria-label="Stop"]');
    // The reply grows above its Stop with every chunk: on a busy machine a click at the button's
    // coordinates can land on text that moved there meanwhile. A DOM click presses this button.
    await stop?.evaluate((b) => (b as unknown as { click(): void }).click());
    await page.waitForSelector('[data-reply][data-state="stopped"]', { timeout: 15_000 });
    const text = (await replyBodies(page))[0] ?? '';
    expect(text.length).toBeLessThan(3000);
    expect(text).toContain('(stopped)');
    expect(await page.$('[data-reply] [aria-label="Stop"]')).toBeNull();
    await page.close();
  });

  it('two tabs on two conversations stream at once', async () => {
    const [a, b] = await Promise.all([openConversation('tabone'), openConversation('tabtwo')]);
    if (!a || !b) throw new Error('no page');
    const message = '[long 1500] [chunks 15] [delay 150]';
    // Sampling starts before the sends, and both messages go at once (no typing): on a busy
    // machine typing into the second tab can take longer than the first reply streams.
    const sampleFromNow = `new MutationObserver(() => ${SAMPLE_NEWEST_REPLY}).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true })`;
    for (const p of [a, b]) {
      await p.evaluate(sampleFromNow);
      await p.$eval('[aria-label="Message"]', (el, t) => ((el as unknown as { value: string }).value = t), message);
    }
    // A DOM click: an input event would go to the tab in front only.
    const click = (p: Page) => p.$eval('[aria-label="Send"]', (el) => (el as unknown as { click(): void }).click());
    await Promise.all([click(a), click(b)]);
    const [sa, sb] = await Promise.all([followReply(a), followReply(b)]);
    const span = (s: Sample[]) => {
      const st = s.filter((x) => x.state === 'streaming');
      return { from: st[0]?.at ?? Infinity, to: st.at(-1)?.at ?? -Infinity };
    };
    const ra = span(sa);
    const rb = span(sb);
    // Each tab saw its reply streaming, and the two streaming spans overlap.
    expect(ra.from).toBeLessThanOrEqual(rb.to);
    expect(rb.from).toBeLessThanOrEqual(ra.to);
    expect(sa.at(-1)?.state).toBe('final');
    expect(sb.at(-1)?.state).toBe('final');
    // Each tab shows only its own conversation.
    expect(await a.$$eval('[data-reply]', (e) => e.length)).toBe(1);
    expect(await b.$$eval('[data-reply]', (e) => e.length)).toBe(1);
    await Promise.all([a.close(), b.close()]);
  });

  it('thumbs on a finished reply record the vote', async () => {
    const page = await openConversation('thumbs');
    await send(page, 'rate me');
    const up = await page.waitForSelector('[data-reply][data-state="final"] [aria-label="Good reply"]');
    await up?.click();
    await page.waitForSelector('[aria-label="Good reply"][aria-pressed="true"]');
    expect(await page.$eval('#status', (e) => e.textContent)).toBe('Thanks for the feedback.');
    await page.close();
  });

  it('Markdown is rendered, and markup the assistant writes stays text', async () => {
    const page = await openConversation('markup');
    await send(page, '**bold** <img src=x onerror="document.title=1"> <script>document.title=2</script>');
    await page.waitForSelector('[data-reply][data-state="final"]');
    expect(await page.$$eval('[data-reply] strong', (e) => e.map((x) => x.textContent))).toEqual(['bold']);
    expect(await page.$$('[data-reply] img, [data-reply] script')).toHaveLength(0);
    expect((await replyBodies(page))[0]).toContain('<img src=x');
    expect(await page.title()).toBe('assistant-bridge playground');
    await page.close();
  });

  it('a failed reply ends in data-state="error"', async () => {
    const page = await openConversation('failing');
    await send(page, 'break [status 500]');
    await page.waitForSelector('[data-reply][data-state="error"]', { timeout: 20_000 });
    await page.close();
  });

  it('"New conversation" starts an empty one; the old one is still listed', async () => {
    const page = await openConversation('oldone');
    await send(page, 'first words');
    await page.waitForSelector('[data-reply][data-state="final"]');
    await page.click('[aria-label="New conversation"]');
    await page.waitForFunction("document.body.dataset.loaded !== 'oldone' && location.hash !== '#oldone'");
    expect(await page.$$('[data-reply]')).toHaveLength(0);
    const titles = await page.$$eval('nav li button', (e) => e.map((x) => x.textContent));
    expect(titles).toContain('first words');
    await page.close();
  });

  it('Reset starts the conversation afresh: a reload shows nothing of before', async () => {
    const page = await openConversation('resetme');
    await send(page, 'remember this');
    await page.waitForSelector('[data-reply][data-state="final"]');
    await page.click('[aria-label="Reset conversation"]');
    await page.waitForFunction("document.getElementById('status').textContent === 'A fresh conversation starts here.'");
    await page.reload();
    await page.waitForSelector('body[data-loaded="resetme"]');
    expect(await page.$$('[data-reply], .msg.user')).toHaveLength(0);
    await send(page, 'again');
    await page.waitForSelector('[data-reply][data-state="final"]');
    expect(await replyBodies(page)).toEqual(['You said: again']);
    await page.close();
  });

  it('a reply longer than one message continues in a second one, as on a platform', async () => {
    const page = await openConversation('splitme');
    await send(page, '[long 6000] [chunks 30]');
    await page.waitForFunction(
      "[...document.querySelectorAll('[data-reply]')].map((e) => e.dataset.state).join() === 'final,final'",
      { polling: 'mutation', timeout: 20_000 },
    );
    const bodies = await page.$$eval('[data-reply]', (els) => els.map((e) => e.getAttribute('data-reply')));
    expect(bodies).toHaveLength(2);
    await page.close();
  });

  it('a reload in the middle of a reply picks the stream up again', async () => {
    const page = await openConversation('midway');
    await send(page, '[long 2000] [chunks 20] [delay 200]');
    await page.waitForSelector('[data-reply][data-state="streaming"]');
    await page.reload();
    await page.waitForSelector('body[data-loaded="midway"] [data-reply][data-state="streaming"]');
    await page.waitForSelector('[data-reply][data-state="final"]', { timeout: 20_000 });
    expect(await page.$$('[data-reply]')).toHaveLength(1);
    await page.close();
  });
});
