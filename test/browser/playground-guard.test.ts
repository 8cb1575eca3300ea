import type { Browser, BrowserContext, Cookie, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../src/core/user-messages.js';
import { type PlaygroundWorld, startPlayground } from '../integration/playground-http.js';
import { type AttackerSite, CHROMIUM, haveChromium, launchChromium, startAttackerSite } from './browser-bridge.js';

// Only the playground's own page drives it, in a real browser (issue 29): a page from another
// origin (another port of this machine, so the browser even sends the playground's SameSite
// cookies) cannot send with fetch, a `no-cors` fetch or an auto-submitted form, nor read the
// page for its token; a rebinding name (attacker.test mapped to 127.0.0.1 by the browser's
// resolver) gets nothing; the real page works; two browser contexts are two users, and a
// refusal shows in the page every time.

const inCi = process.env.CI === 'true';

describe.runIf(!haveChromium && inCi)('playground guard in a browser (CI)', () => {
  it('has chromium to drive', () => {
    expect.fail(`chromium not found at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  });
});

/** The hostile pages, each aimed at the playground on `target`'s port. */
function attackerPages(target: string): Record<string, string> {
  const send = (conversation: string, text: string) => JSON.stringify({ conversation, text });
  const page = (script: string) =>
    `<!doctype html><html><head><title>cats</title></head><body><script>
window.result = 'pending';
(async () => { try { ${script} } catch (e) { window.result = 'threw: ' + e.name; } })();
</script></body></html>`;
  return {
    '/fetch': page(`
      const r = await fetch('${target}/playground/api/send', { method: 'POST', credentials: 'include',
        headers: { 'content-type': 'application/json' }, body: ${JSON.stringify(send('evilfetch', 'evil fetch'))} });
      window.result = 'status ' + r.status;`),
    '/nocors': page(`
      for (const path of ['send', 'reset', 'stop', 'vote']) {
        await fetch('${target}/playground/api/' + path, { method: 'POST', mode: 'no-cors', credentials: 'include',
          headers: { 'content-type': 'text/plain' }, body: ${JSON.stringify(send('evilnocors', 'evil no-cors'))} });
      }
      window.result = 'sent';`),
    '/steal': page(`
      const r = await fetch('${target}/', { credentials: 'include' });
      window.result = 'read ' + (await r.text()).length;`),
    // The classic JSON-by-form: a text/plain form whose one field spells a JSON body.
    '/form': `<!doctype html><html><body>
<form method="POST" action="${target}/playground/api/send" enctype="text/plain">
<input name='{"conversation":"evilform","text":"evil form","x":"' value='"}'>
</form>
<form method="POST" action="${target}/playground/api/send">
<input name="conversation" value="evilform2"><input name="text" value="evil urlencoded">
</form>
<script>document.forms[0].submit();</script></body></html>`,
  };
}

describe.skipIf(!haveChromium)('playground guard in a browser', () => {
  let w: PlaygroundWorld;
  let browser: Browser | undefined;
  let attacker: AttackerSite | undefined;
  let target = '';
  let evil = '';

  beforeAll(async () => {
    w = await startPlayground({ allowRemote: false }, { USER_MESSAGES_PER_MINUTE: '2' });
    target = `http://127.0.0.1:${w.port}`;
    const pages = attackerPages(target);
    attacker = await startAttackerSite((req, res) => {
      const url = new URL(req.url ?? '/', 'http://attacker');
      // /link?to=URL: a page with a link, as a chat message or a mail would show one.
      const to = url.searchParams.get('to');
      const html =
        url.pathname === '/link' && to !== null ? `<a id="go" href="${encodeURI(to)}">open</a>` : pages[url.pathname];
      res.writeHead(html === undefined ? 404 : 200, { 'content-type': 'text/html' });
      res.end(html ?? '');
    });
    evil = attacker.url;
    browser = await launchChromium([
      '--disable-background-networking',
      '--no-first-run',
      // DNS rebinding without DNS: the browser resolves attacker.test to this machine.
      '--host-resolver-rules=MAP attacker.test 127.0.0.1',
    ]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await attacker?.close();
    await w?.close();
  });

  const b = () => browser as Browser;

  const openConversation = async (ctx: BrowserContext | Browser, id: string, base = target): Promise<Page> => {
    const page = await ctx.newPage();
    await page.goto(`${base}/#${id}`);
    await page.waitForSelector(`body[data-loaded="${id}"]`);
    return page;
  };

  const send = async (page: Page, text: string): Promise<void> => {
    await page.bringToFront();
    await page.type('[aria-label="Message"]', text);
    await page.click('[aria-label="Send"]');
  };

  const bodies = (page: Page) =>
    page.$$eval('[data-reply]', (els) => els.map((e) => e.querySelector('.body')?.textContent ?? ''));

  it('a page from another origin cannot send: fetch, no-cors fetch, form post; nor read the page', async () => {
    const ctx = await b().createBrowserContext();
    // The victim has used the playground in this browser: its cookies exist and, the attacker
    // being on another port of the same host, the browser sends them along.
    const real = await openConversation(ctx, 'victim');
    await send(real, 'mine');
    await real.waitForSelector('[data-reply][data-state="final"]');
    const before = w.upstreamMessages().length;

    const page = await ctx.newPage();
    for (const path of ['/fetch', '/nocors', '/steal']) {
      await page.goto(evil + path);
      await page.waitForFunction("window.result !== 'pending'", { timeout: 10_000 });
      const result = String(await page.evaluate('window.result'));
      // fetch: the preflight gets no CORS answer (TypeError); no-cors: sent, refused (opaque);
      // reading the page for its token: blocked by the browser.
      expect({ path, result }).toEqual({ path, result: path === '/nocors' ? 'sent' : 'threw: TypeError' });
    }
    const refused = page.waitForResponse((r) => r.url() === `${target}/playground/api/send`);
    await page.goto(`${evil}/form`);
    const answer = await refused;
    expect(answer.status()).toBe(403);
    expect(await answer.json()).toMatchObject({ reason: 'bad_origin' });

    expect(w.upstreamMessages().length).toBe(before);
    expect(w.upstreamMessages().filter((m) => m.startsWith('evil'))).toEqual([]);
    // The victim's conversation was not reset either: a reload still shows it.
    await real.reload();
    await real.waitForSelector('body[data-loaded="victim"] [data-reply][data-state="final"]');
    await ctx.close();
  }, 60_000);

  it('DNS rebinding: the page under another name is refused, and nothing can be sent from it', async () => {
    const ctx = await b().createBrowserContext();
    const page = await ctx.newPage();
    const res = await page.goto(`http://attacker.test:${w.port}/`);
    expect(res?.status()).toBe(403);
    const status = await page.evaluate(
      `fetch('/playground/api/send', { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ conversation: 'rebound', text: 'evil rebound' }) }).then((r) => r.status)`,
    );
    expect(status).toBe(403);
    expect(w.upstreamMessages()).not.toContain('evil rebound');
    await ctx.close();
  }, 60_000);

  it('the real page works at 127.0.0.1 and at localhost', async () => {
    for (const base of [target, `http://localhost:${w.port}`]) {
      const ctx = await b().createBrowserContext();
      const page = await openConversation(ctx, `real${new URL(base).hostname.replace(/\W/g, '')}`, base);
      await send(page, `hello from ${new URL(base).hostname}`);
      await page.waitForSelector('[data-reply][data-state="final"]');
      expect(await bodies(page)).toEqual([`You said: hello from ${new URL(base).hostname}`]);
      await ctx.close();
    }
  }, 60_000);

  it('two browser contexts are two users: one is slowed down (and told so every time), the other is not', async () => {
    const [ca, cb] = [await b().createBrowserContext(), await b().createBrowserContext()];
    const a = await openConversation(ca, 'userone');
    const bb = await openConversation(cb, 'usertwo');
    const [ka, kb] = [await a.cookies(), await bb.cookies()];
    const uid = (cs: Cookie[]) => cs.find((c) => c.name === 'playground_uid');
    expect(uid(ka)).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(uid(ka)?.value).not.toBe(uid(kb)?.value);

    // USER_MESSAGES_PER_MINUTE=2: a's third and fourth messages are refused, each visibly.
    for (const text of ['one', 'two', 'three', 'four']) {
      await send(a, text);
      await a.waitForFunction(
        `document.querySelectorAll('.msg.user').length === ${['one', 'two', 'three', 'four'].indexOf(text) + 1}`,
      );
    }
    await a.waitForFunction(
      `[...document.querySelectorAll('[data-reply]')].filter((e) => e.textContent.includes(${JSON.stringify(MESSAGES.slowDown)})).length === 2`,
      { timeout: 20_000 },
    );
    await send(bb, 'calm');
    await bb.waitForSelector('[data-reply][data-state="final"]');
    expect(await bodies(bb)).toEqual(['You said: calm']);

    // b cannot open a's conversation: it is told so, and sees none of it.
    const peek = await cb.newPage();
    await peek.goto(`${target}/#userone`);
    await peek.waitForSelector('body[data-loaded="userone"]');
    // Told where it happened: the conversation's notice says why it cannot be read.
    expect(await peek.$eval('[data-notice]', (e) => e.textContent)).toContain('another browser uses this conversation');
    expect(await peek.$$('[data-reply]')).toHaveLength(0);
    await Promise.all([ca.close(), cb.close()]);
  }, 60_000);

  it('opened (PLAYGROUND=on): nothing without the token; /playground?token=… once, even from a link on another site, then the page works', async () => {
    const TOKEN = 'browser-test-playground-token';
    const open = await startPlayground({ allowRemote: true, token: TOKEN });
    try {
      const base = `http://127.0.0.1:${open.port}`;
      const ctx = await b().createBrowserContext();
      const page = await ctx.newPage();
      expect((await page.goto(`${base}/`))?.status()).toBe(401);
      // A link on another site (a chat message, a mail) to /playground?token=…: the browser
      // follows it cross-site, where SameSite=Strict cookies are not sent; the page bounces.
      const link = await ctx.newPage();
      // attacker.test is another site than 127.0.0.1 (another port of the same host would be the same site).
      await link.goto(
        `${evil.replace('127.0.0.1', 'attacker.test')}/link?to=${encodeURIComponent(`${base}/playground?token=${TOKEN}`)}`,
      );
      await Promise.all([link.waitForNavigation(), link.click('#go')]);
      await link.waitForSelector('body[data-loaded]', { timeout: 15_000 });
      expect(link.url()).toBe(`${base}/#${await link.evaluate('document.body.dataset.loaded')}`);
      await send(link, 'from a link');
      await link.waitForSelector('[data-reply][data-state="final"]');
      expect(await bodies(link)).toEqual(['You said: from a link']);
      // The credential is a cookie of this browser now: a plain visit works.
      const later = await ctx.newPage();
      expect((await later.goto(`${base}/#again`))?.status()).toBe(200);
      await later.waitForSelector('body[data-loaded="again"]');
      await ctx.close();
    } finally {
      await open.close();
    }
  }, 60_000);
});
