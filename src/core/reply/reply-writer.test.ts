import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { TestConnector, type TestConnectorOptions } from '../../../test/fakes/test-connector.js';
import { silentLogger } from '../../logger.js';
import { type BridgeMetrics, noopMetrics } from '../metrics-port.js';
import { ReplyWriter } from './reply-writer.js';
import { RateLimitScheduler } from '../budget/scheduler.js';

// The writer against the TestConnector's sliding-window bucket and the manual clock: when the
// final write leaves, and what a reply does when the budgets cannot pay its final.

interface Rig {
  clock: ManualClock;
  conn: TestConnector;
  scheduler: RateLimitScheduler;
  postOnce: number[];
  writer(channelId: string): ReplyWriter;
}

function rig(conn: Omit<TestConnectorOptions, 'clock'>, intervalMs = 1000): Rig {
  const clock = new ManualClock();
  const c = new TestConnector({ clock, ...conn });
  // The production margin (5% of the window, at least 50 ms).
  const scheduler = new RateLimitScheduler({ clock });
  const postOnce: number[] = [0];
  const metrics: BridgeMetrics = {
    ...noopMetrics,
    postOnce: (_p, delta) => postOnce.push((postOnce.at(-1) as number) + delta),
  };
  return {
    clock,
    conn: c,
    scheduler,
    postOnce,
    writer: (channelId) =>
      new ReplyWriter({
        sink: c.sink({ platform: 'test', channelId }),
        scheduler,
        clock,
        editIntervalMs: intervalMs,
        platform: 'test',
        metrics,
        logger: silentLogger,
      }),
  };
}

/** Budgets like the platforms' (a lone reply's channel; post and edit share the TestConnector's bucket). */
const PLATFORMS: Array<[string, Omit<TestConnectorOptions, 'clock'>]> = [
  ['Slack edit mode (tier 3, no headers)', { bucketLimit: 50, bucketWindowMs: 60_000, reportHeaders: false }],
  [
    'a Slack native stream (tier 3, final always written, message age)',
    {
      bucketLimit: 50,
      bucketWindowMs: 60_000,
      reportHeaders: false,
      needsFinalWrite: true,
      maxMessageAgeMs: 270_000,
    },
  ],
  ['Discord (5 per 5 s, headers)', { bucketLimit: 5, bucketWindowMs: 5000, reportHeaders: true }],
  [
    'Discord with controls (5 per 5 s, headers, final always written)',
    { bucketLimit: 5, bucketWindowMs: 5000, reportHeaders: true, needsFinalWrite: true },
  ],
];

describe('ReplyWriter: the final write', () => {
  for (const [name, conn] of PLATFORMS) {
    it(`a lone reply's final leaves the moment the upstream ends: ${name}`, async () => {
      // Ends at different points of the edit interval, after short and long streams.
      for (const streamMs of [300, 1250, 4400, 9_730, 30_010]) {
        const { clock, conn: c, writer: make } = rig(conn);
        const writer = make('C1');
        writer.start();
        let text = '';
        for (let t = 0; t < streamMs; t += 50) {
          writer.append(`w${t} `);
          text += `w${t} `;
          await clock.advance(50);
        }
        const endedAt = clock.now();
        const done = writer.finish();
        await clock.advance(5000);
        const r = await done;
        expect(r.text).toBe(text);
        expect(c.contentsIn('C1').join('')).toBe(text);
        const last = c.writes.at(-1);
        expect(last?.final).toBe(true);
        expect({ streamMs, delay: (last?.at ?? 0) - endedAt }).toEqual({ streamMs, delay: 0 });
        expect(c.rateLimitHits).toBe(0);
        expect(c.violations).toEqual([]);
      }
    });
  }

  it("a two-message reply's finals leave the moment the upstream ends (Discord, 5 per 5 s)", async () => {
    // ~3,000 chars streamed over ~3 s: the first message is cut at 2,000 while streaming, the
    // second is posted, and both must be final within the channel's 5 writes. A continuation
    // posted while streaming costs a write the finals need (its text is not final yet), just
    // like an intermediate edit, so it must leave what the reply reserved for its final.
    for (const chunkMs of [17, 18, 19, 20, 21, 22, 23, 24, 25, 26]) {
      const {
        clock,
        conn: c,
        writer: make,
      } = rig({
        bucketLimit: 5,
        bucketWindowMs: 5000,
        reportHeaders: true,
        needsFinalWrite: true,
      });
      const writer = make('C1');
      writer.start();
      let text = '';
      for (let i = 0; i < 150; i++) {
        const d = `w${String(i).padStart(3, '0')} lorem ipsum dol `; // 20 chars
        writer.append(d);
        text += d;
        await clock.advance(chunkMs);
      }
      const endedAt = clock.now();
      const done = writer.finish();
      await clock.advance(10_000);
      const r = await done;
      expect(r.messageIds).toHaveLength(2);
      expect(c.contentsIn('C1').join('')).toBe(text);
      const finals = c.writes.filter((w) => w.final);
      const lastAt = Math.max(...c.writes.map((w) => w.at));
      expect({ chunkMs, delay: lastAt - endedAt }).toEqual({ chunkMs, delay: 0 });
      expect(finals.at(-1)?.last).toBe(true);
      expect(c.rateLimitHits).toBe(0);
      expect(c.violations).toEqual([]);
    }
  });

  it("a four-message reply's finals leave the moment the upstream ends (Discord, 5 per 5 s)", async () => {
    // 6,000 chars over 3 s (the bench's `[long 6000] [chunks 150] [delay 20]`): each message fills
    // within an edit interval. An intermediate edit of a message about to be cut would be the
    // bucket's sixth write in 5 s, and the last part would wait a window for it: the writer waits
    // for the cut instead (a post per part plus the first part's final: 5 writes).
    for (const chunkMs of [18, 20, 22]) {
      const {
        clock,
        conn: c,
        writer: make,
      } = rig({ bucketLimit: 5, bucketWindowMs: 5000, reportHeaders: true, needsFinalWrite: true });
      const writer = make('C1');
      writer.start();
      let text = '';
      for (let i = 0; i < 150; i++) {
        const d = `w${String(i).padStart(3, '0')} lorem ipsum dolor sit amet, consec `; // 40 chars
        writer.append(d);
        text += d;
        await clock.advance(chunkMs);
      }
      const endedAt = clock.now();
      const done = writer.finish();
      await clock.advance(10_000);
      const r = await done;
      expect(r.messageIds.length).toBeGreaterThanOrEqual(3);
      expect(c.contentsIn('C1').join('')).toBe(text);
      const lastAt = Math.max(...c.writes.map((w) => w.at));
      expect({ chunkMs, delay: lastAt - endedAt }).toEqual({ chunkMs, delay: 0 });
      expect(c.rateLimitHits).toBe(0);
      expect(c.violations).toEqual([]);
    }
  });

  it('a post queued for budget leaves with the text as it is then, and is the final write', async () => {
    const { clock, conn, scheduler, writer: make } = rig({ bucketLimit: 5, bucketWindowMs: 5000 });
    // The channel's budget is spent by someone else: the first post has to wait.
    const sink = conn.sink({ platform: 'test', channelId: 'C1' });
    (await scheduler.acquire(sink.buckets('post'), 'first')).done(); // its one token (no headers yet)
    const writer = make('C1');
    writer.start();
    writer.append('Hello');
    await clock.advance(100);
    expect(conn.writes).toEqual([]);
    writer.append(' world');
    const done = writer.finish();
    await clock.advance(10_000);
    await done;
    expect(conn.writes.map((w) => [w.op, w.text, w.final])).toEqual([['post', 'Hello world', true]]);
  });
});

describe('ReplyWriter: post once under load', () => {
  it.each([false, true])(
    'later replies post once at the end; every reply ends exact, with no 429 (headers: %s)',
    async (reportHeaders) => {
      // A tight shared bucket: 10 writes a minute for every channel (like a workspace's budget).
      // With headers, `remaining` counts only what the platform saw: grants still in flight are
      // subtracted, or several granted at once would overshoot it.
      const { clock, conn, writer: make, postOnce } = rig({ bucketLimit: 10, bucketWindowMs: 60_000, reportHeaders });
      const shared = conn.sink({ platform: 'test', channelId: 'C1' }).buckets('edit')[0];
      expect(shared?.key).toBe('test:channel:C1');
      const n = 8;
      const writers = Array.from({ length: n }, () => make('C1'));
      const texts = Array.from({ length: n }, () => '');
      for (const w of writers) w.start();
      const done: Array<Promise<unknown>> = [];
      for (let t = 0; t < 20; t++) {
        writers.forEach((w, i) => {
          const d = `r${i}w${t} `;
          w.append(d);
          texts[i] += d;
        });
        await clock.advance(500);
      }
      const peak = Math.max(...postOnce);
      expect(peak).toBeGreaterThan(0);
      for (const w of writers) done.push(w.finish());
      await clock.advance(120_000);
      const results = (await Promise.all(done)) as Array<{ messageIds: string[]; text: string }>;
      expect(postOnce.at(-1)).toBe(0);
      for (const [i, r] of results.entries()) {
        expect(r.text).toBe(texts[i]);
        const contents = r.messageIds.map((id) => conn.messages.get(id)?.content);
        expect(contents.join('')).toBe(texts[i]);
        for (const id of r.messageIds) expect(conn.messages.get(id)?.final).toBe(true);
      }
      // A post-once reply wrote each of its messages exactly once.
      const onceReplies = results.filter((r) => r.messageIds.every((id) => conn.messages.get(id)?.writes === 1));
      expect(onceReplies.length).toBeGreaterThanOrEqual(peak);
      expect(conn.rateLimitHits).toBe(0);
      expect(conn.violations).toEqual([]);
    },
  );

  it('posts a long reply once at the end in continuation parts', async () => {
    const { clock, conn, scheduler, writer: make } = rig({ bucketLimit: 10, bucketWindowMs: 60_000, maxChars: 100 });
    const sink = conn.sink({ platform: 'test', channelId: 'C1' });
    // Many live replies reserve their finals: this one cannot afford its own.
    const releases = Array.from({ length: 12 }, () => scheduler.reserve(sink.buckets('edit')));
    expect(scheduler.canAffordFinal(sink.buckets('edit'))).toBe(false);
    const writer = make('C1');
    writer.start();
    let text = '';
    for (let i = 0; i < 60; i++) {
      writer.append(`word${i} `);
      text += `word${i} `;
      await clock.advance(100);
    }
    expect(conn.writes).toEqual([]);
    expect(conn.workingShown).toEqual(['test:channel:C1']);
    for (const r of releases) r();
    const done = writer.finish();
    await clock.advance(60_000);
    const r = await done;
    expect(conn.writes.every((w) => w.op === 'post' && w.final)).toBe(true);
    expect(conn.writes.length).toBeGreaterThan(3);
    expect(conn.contentsIn('C1').join('')).toBe(text);
    expect(r.messageIds).toHaveLength(conn.writes.length);
    expect(conn.rateLimitHits).toBe(0);
  });
});

describe('ReplyWriter: a message about to fill', () => {
  it('shows the text it held back for the cut once the upstream pauses (a tool runs)', async () => {
    // Fast text near the message's cap: the writer waits for the cut rather than edit a message
    // it is about to finish. When the upstream then goes quiet (an agent's tool runs for 30 s),
    // the cut is not coming: what arrived must be shown within about an interval, not when the
    // next chunk comes.
    const { clock, conn: c, writer: make } = rig({ bucketLimit: 50, bucketWindowMs: 60_000, reportHeaders: false });
    const writer = make('C1');
    writer.start();
    let text = '';
    for (let i = 0; i < 38; i++) {
      const chunk = `${'word '.repeat(9)}${String(i).padStart(4, '0')}\n`;
      writer.append(chunk);
      text += chunk;
      await clock.advance(50);
    }
    expect(text.length).toBeGreaterThan(1800);
    expect(text.length).toBeLessThan(2000);
    await clock.advance(2_500);
    expect(c.contentsIn('C1').join('')).toBe(text);
    const done = writer.finish();
    await clock.advance(1000);
    expect((await done).text).toBe(text);
    expect(c.violations).toEqual([]);
  });
});
