import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentFile, AgentStep } from '../../src/core/chat-port.js';
import type { IncomingMessage, MessageHandler } from '../../src/core/ports.js';
import { mountPlayground, type PlaygroundConnector } from '../../src/connectors/playground/index.js';
import { silentLogger } from '../../src/logger.js';
import { createHttpServer, createMetrics, type HttpServer } from '../../src/server/index.js';
import { FakeChat } from '../fakes/fake-chat.js';
import { MemoryConversationStore, MemoryPlaygroundOwnerStore } from '../fakes/memory-store.js';
import { haveChromium, launchChromium } from './browser-bridge.js';

// Issue 36 in the playground: a step line under the reply while the assistant works, then the
// sources it cites (in the answer's text, as on every platform) and the files it made after it.
// A scripted handler writes to the playground's sink as the core does (steps on the writes,
// files on the last one), and the real page shows what arrives. Real HTTP server, page, Chromium.

const SHOTS = process.env.PLAYGROUND_SHOTS ?? tmpdir();

/** A promise the test resolves: the handler waits for it between phases (no sleeps). */
function gate(): { wait: Promise<void>; open: () => void } {
  let open = (): void => {};
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

describe.skipIf(!haveChromium)('playground: steps, sources and files (issue 36)', { timeout: 90_000 }, () => {
  let server: HttpServer | undefined;
  let connector: PlaygroundConnector | undefined;
  let browser: Browser | undefined;
  let base = '';
  const phase = { searched: gate(), read: gate() };

  const handler: MessageHandler = {
    async handle(msg: IncomingMessage) {
      const sink = msg.sink;
      const o = { part: 0, replyKey: `key-${msg.eventId}` };
      const search: AgentStep = { id: 's1', title: 'Searching the web', state: 'running' };
      const read: AgentStep = { id: 's2', title: 'Reading example.com', state: 'running' };
      // As the core writes for a sink that shows steps (ReplySink.showsSteps, WriteOptions.steps):
      // the running step in the working indicator, then with every write but the final one.
      await sink.showWorking();
      await sink.showStep?.(search);
      await phase.searched.wait;
      const { messageId } = await sink.post('Hello', {
        ...o,
        final: false,
        steps: [{ ...search, state: 'done' }, read],
      });
      await phase.read.wait;
      const notes: AgentFile = {
        name: 'notes.txt',
        mime: 'text/plain',
        size: 6,
        data: new TextEncoder().encode('hello\n'),
      };
      expect(sink.showsFile?.(notes)).toBe(true);
      // The sources as the core appends them to the final text (agent-work.ts), for every platform.
      const text =
        'Hello world.\n\n**Sources**\n1. [Example A](<https://example.com/a>)\n2. [example.org](<https://example.org/b>)';
      await sink.edit(messageId ?? '', text, { ...o, final: true, last: true, files: [notes] });
      return { status: 'answered' };
    },
    async reset() {},
  };

  beforeAll(async () => {
    server = createHttpServer({
      host: '127.0.0.1',
      port: 0,
      logger: silentLogger,
      metrics: createMetrics({ defaultMetrics: false }),
      readiness: () => ({ ready: true, checks: {} }),
    });
    connector = mountPlayground({
      server,
      chat: new FakeChat(),
      conversations: new MemoryConversationStore(),
      owners: new MemoryPlaygroundOwnerStore(),
      botFor: () => 'demo-bot',
      allowRemote: false,
      logger: silentLogger,
    });
    await connector.start(handler);
    const { port } = await server.listen();
    base = `http://127.0.0.1:${port}/`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await connector?.shutdown();
    await server?.close();
  });

  for (const width of [1280, 390]) {
    it(`at ${width} px: the running step shows while the reply streams, then sources and files after it`, async () => {
      phase.searched = gate();
      phase.read = gate();
      const page = await (browser as Browser).newPage();
      await page.setViewport({ width, height: 800 });
      await page.goto(`${base}#steps${width}`);
      await page.waitForSelector(`body[data-loaded="steps${width}"]`);
      // The built-in emulator does not answer here: no hint about its commands.
      expect(await page.$eval('#emulator-hint', (e) => (e as unknown as { hidden: boolean }).hidden)).toBe(true);
      await page.$eval('[aria-label="Message"]', (el) => ((el as unknown as { value: string }).value = 'look it up'));
      await page.click('[aria-label="Send"]');

      // Before a word: the step under the typing indicator.
      await page.waitForFunction(
        "document.querySelector('[data-pending] .step-line')?.textContent === 'Searching the web…'",
      );
      phase.searched.open();
      // With the first words: the running step under the streaming reply.
      await page.waitForFunction(
        `document.querySelector('[data-reply][data-state="streaming"] .step-line')?.textContent === 'Reading example.com…'`,
      );
      await page.screenshot({ path: join(SHOTS, `playground-steps-${width}.png`) });
      phase.read.open();

      await page.waitForSelector('[data-reply][data-state="final"] .files');
      const shown = await page.$eval('[data-reply]', (e) => ({
        body: e.querySelector('.body p')?.textContent,
        step: e.querySelector('.step-line')?.textContent ?? '',
        sources: [...e.querySelectorAll('.body a')].map((a) => [a.textContent, a.getAttribute('href')]),
        files: [...e.querySelectorAll('.files a')].map((a) => [a.textContent, a.getAttribute('download')]),
      }));
      expect(shown).toEqual({
        body: 'Hello world.',
        step: '',
        sources: [
          ['Example A', 'https://example.com/a'],
          ['example.org', 'https://example.org/b'],
        ],
        files: [['notes.txt (6 B)', 'notes.txt']],
      });
      const href = await page.$eval('[data-reply] .files a', (a) => a.getAttribute('href'));
      expect(href).toBe(`data:text/plain;base64,${Buffer.from('hello\n').toString('base64')}`);
      await page.screenshot({ path: join(SHOTS, `playground-sources-${width}.png`) });
      await page.close();
    });
  }
});
