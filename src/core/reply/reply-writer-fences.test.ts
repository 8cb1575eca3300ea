import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { TestConnector, type TestConnectorOptions } from '../../../test/fakes/test-connector.js';
import { silentLogger } from '../../logger.js';
import { noopMetrics } from '../metrics-port.js';
import { ReplyWriter } from './reply-writer.js';
import { RateLimitScheduler } from '../budget/scheduler.js';

// A long reply whose code block spans three messages and more, streamed through the writer: every
// message after the first reopens the fence (```ts), every message the block goes on from closes
// it, and without those added lines the messages are the reply, character for character. The
// expected fence lines are written out here, not taken from the writer's own bookkeeping.

const PLATFORMS: Array<[string, Omit<TestConnectorOptions, 'clock'>]> = [
  ['edit mode, no headers', { bucketLimit: 50, bucketWindowMs: 60_000, reportHeaders: false, maxChars: 120 }],
  [
    'final always written, message age',
    { bucketLimit: 50, bucketWindowMs: 60_000, needsFinalWrite: true, maxMessageAgeMs: 270_000, maxChars: 120 },
  ],
  ['5 per 5 s with headers', { bucketLimit: 5, bucketWindowMs: 5000, reportHeaders: true, maxChars: 120 }],
];

const REOPEN = '```ts\n';

/** The messages without the fence lines added around cuts. */
function withoutAddedFences(contents: string[]): string {
  return contents
    .map((c, i) => {
      let body = c;
      if (i > 0) {
        expect(body.startsWith(REOPEN)).toBe(true);
        body = body.slice(REOPEN.length);
      }
      if (i < contents.length - 1) {
        expect(body.endsWith('\n```')).toBe(true);
        // Every code line ends with `;`: after one, the cut fell at its line end and only the
        // ``` was added; elsewhere the cut fell inside a line and the newline was added too.
        body = body.slice(0, body.endsWith(';\n```') ? -3 : -4);
      }
      return body;
    })
    .join('');
}

describe('ReplyWriter: a code block over three messages and more', () => {
  for (const [name, conn] of PLATFORMS) {
    it(`streamed in small deltas: ${name}`, async () => {
      const clock = new ManualClock();
      const c = new TestConnector({ clock, ...conn });
      const writer = new ReplyWriter({
        sink: c.sink({ platform: 'test', channelId: 'C1' }),
        scheduler: new RateLimitScheduler({ clock }),
        clock,
        editIntervalMs: 1000,
        platform: 'test',
        metrics: noopMetrics,
        logger: silentLogger,
      });
      writer.start();
      const code = Array.from({ length: 40 }, (_, i) => `const v${i} = f(${i});`).join('\n');
      const reply = `Here is the code:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nThat is all.`;
      for (let i = 0; i < reply.length; i += 7) {
        writer.append(reply.slice(i, i + 7));
        await clock.advance(40);
      }
      const done = writer.finish();
      await clock.advance(120_000);
      const r = await done;
      const contents = c.contentsIn('C1');
      expect(contents.length).toBeGreaterThanOrEqual(5);
      expect(r.messageIds).toHaveLength(contents.length);
      expect(withoutAddedFences(contents)).toBe(reply);
      expect(c.violations).toEqual([]);
      expect(c.rateLimitHits).toBe(0);
    });
  }
});
