import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { TestConnector } from '../../../test/fakes/test-connector.js';
import { ChatError } from '../chat-port.js';
import { type BridgeMetrics, noopMetrics } from '../metrics-port.js';
import { PlatformWriteError } from '../ports.js';
import { type PumpOptions, pump } from './reply-to.js';
import { RateLimitScheduler } from '../budget/scheduler.js';
import { fencesBalanced } from './fences.js';
import { silentLogger } from '../../logger.js';

/** A source the test feeds by hand. */
class Deltas implements AsyncIterable<string> {
  private queue: string[] = [];
  private ended = false;
  private error: unknown;
  private waiting: (() => void) | undefined;
  returned = false;

  push(...ds: string[]): void {
    this.queue.push(...ds);
    this.waiting?.();
  }
  end(): void {
    this.ended = true;
    this.waiting?.();
  }
  fail(err: unknown): void {
    this.error = err;
    this.waiting?.();
  }
  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    try {
      for (;;) {
        const d = this.queue.shift();
        if (d !== undefined) {
          yield d;
          continue;
        }
        if (this.error !== undefined) throw this.error;
        if (this.ended) return;
        await new Promise<void>((r) => (this.waiting = r));
      }
    } finally {
      this.returned = true;
    }
  }
}

const NOTE = '\n\n_(reply interrupted)_';

function setup(
  opts: {
    maxChars?: number;
    limit?: number;
    declaredLimit?: number;
    headers?: boolean;
    maxMessageAgeMs?: number;
    needsFinalWrite?: boolean;
  } = {},
) {
  const clock = new ManualClock();
  const connectorOpts: ConstructorParameters<typeof TestConnector>[0] = {
    clock,
    maxChars: opts.maxChars ?? 2000,
    bucketLimit: opts.limit ?? 5,
    bucketWindowMs: 5000,
    reportHeaders: opts.headers ?? true,
  };
  if (opts.declaredLimit !== undefined) connectorOpts.declaredLimit = opts.declaredLimit;
  if (opts.maxMessageAgeMs !== undefined) connectorOpts.maxMessageAgeMs = opts.maxMessageAgeMs;
  if (opts.needsFinalWrite !== undefined) connectorOpts.needsFinalWrite = opts.needsFinalWrite;
  const conn = new TestConnector(connectorOpts);
  const scheduler = new RateLimitScheduler({ clock, marginMs: 10 });
  const src = new Deltas();
  const limitedBuckets: string[] = [];
  const metrics: BridgeMetrics = { ...noopMetrics, platformRateLimited: (_p, b) => limitedBuckets.push(b) };
  const progress: Array<{ ids: string[]; text: string }> = [];
  let stopped = 0;
  const base: PumpOptions = {
    sink: conn.sink({ platform: 'test', channelId: 'C1' }),
    scheduler,
    clock,
    editIntervalMs: 1000,
    platform: 'test',
    metrics,
    logger: silentLogger,
    interruptedNote: NOTE,
    reserveChars: NOTE.length,
    progress: (ids, text) => progress.push({ ids, text }),
    describeError: (err) =>
      err instanceof ChatError && err.kind === 'interrupted'
        ? { outcome: 'interrupted', note: NOTE, replacement: NOTE.trim() }
        : { outcome: 'failed', note: '\n\n_(error)_', replacement: 'Something went wrong.' },
    onStop: () => stopped++,
  };
  return { clock, conn, scheduler, src, base, progress, limitedBuckets, stopped: () => stopped };
}

describe('pump', () => {
  it('posts nothing before non-whitespace text, then the first text at once', async () => {
    const { clock, conn, src, base } = setup();
    const done = pump(src, base);
    src.push('  ', '\n');
    await clock.settle();
    expect(conn.writes).toEqual([]);
    expect(conn.workingShown).toEqual(['test:channel:C1']);
    src.push('Hel');
    await clock.settle();
    expect(conn.writes.map((w) => [w.op, w.text])).toEqual([['post', '  \nHel']]);
    src.end();
    await clock.advance(2000);
    await done;
  });

  it('coalesces deltas into at most one edit per interval, and ends with exactly one final write', async () => {
    const { clock, conn, src, base } = setup();
    const done = pump(src, base);
    src.push('a');
    await clock.settle();
    for (let i = 0; i < 20; i++) {
      src.push('b');
      await clock.advance(100);
    }
    src.push('c');
    const endedAt = clock.now();
    src.end();
    await clock.advance(3000);
    const r = await done;
    expect(r.outcome).toBe('done');
    const w = conn.writes;
    expect(w[0]?.op).toBe('post');
    // The interval paces the intermediate writes; the final leaves as soon as the reply ends.
    for (let i = 1; i < w.length - 1; i++)
      expect((w[i] as { at: number }).at - (w[i - 1] as { at: number }).at).toBeGreaterThanOrEqual(1000);
    expect(w.at(-1)?.at).toBe(endedAt);
    expect(w.filter((x) => x.final)).toHaveLength(1);
    expect(w.at(-1)?.final).toBe(true);
    expect(w.at(-1)?.text).toBe(`a${'b'.repeat(20)}c`);
    // 2.1 s of text: post, ~2 edits, final; never the same text twice
    expect(w.length).toBeLessThanOrEqual(4);
    expect(new Set(w.map((x) => x.text)).size).toBe(w.length);
    expect(conn.violations).toEqual([]);
  });

  it('a short reply is one final post', async () => {
    const { conn, src, base } = setup();
    src.push('Hi', ' there');
    src.end();
    const r = await pump(src, base);
    expect(conn.writes.map((w) => [w.op, w.text, w.final])).toEqual([['post', 'Hi there', true]]);
    expect(r.messageIds).toHaveLength(1);
  });

  it('continues in new messages when the text outgrows a message, each part final, nothing lost', async () => {
    const { clock, conn, src, base } = setup({ maxChars: 100 });
    const done = pump(src, base);
    const words = Array.from({ length: 80 }, (_, i) => `w${i}`).join(' ');
    for (let i = 0; i < words.length; i += 7) {
      src.push(words.slice(i, i + 7));
      await clock.advance(50);
    }
    src.end();
    await clock.advance(20_000);
    const r = await done;
    const msgs = conn.messagesIn('C1');
    expect(msgs.length).toBeGreaterThan(3);
    for (const m of msgs) {
      expect(m.final).toBe(true);
      expect(m.content.length).toBeLessThanOrEqual(100);
    }
    expect(msgs.map((m) => m.content).join('')).toBe(words);
    expect(r.messageIds).toEqual(msgs.map((m) => m.id));
    expect(conn.violations).toEqual([]);
    expect(conn.rateLimitHits).toBe(0);
  });

  it('closes and reopens a code fence across messages', async () => {
    const { clock, conn, src, base } = setup({ maxChars: 120 });
    const done = pump(src, base);
    const code = Array.from({ length: 15 }, (_, i) => `let x${i} = ${i};`).join('\n');
    src.push('Here:\n\n```ts\n', code, '\n```\nDone.');
    src.end();
    await clock.advance(30_000);
    await done;
    const contents = conn.contentsIn('C1');
    expect(contents.length).toBeGreaterThan(1);
    for (const c of contents) expect(fencesBalanced(c)).toBe(true);
    expect(contents[1]?.startsWith('```ts\n')).toBe(true);
    expect(contents.join('\n')).toContain('let x14 = 14;');
  });

  it('keeps the text and appends a note when the stream is interrupted', async () => {
    const { clock, conn, src, base } = setup();
    const done = pump(src, base);
    src.push('Partial answer');
    await clock.settle();
    src.fail(new ChatError('interrupted', 'reset', { partial: true }));
    await clock.advance(2000);
    const r = await done;
    expect(r.outcome).toBe('interrupted');
    expect(conn.contentsIn('C1')).toEqual([`Partial answer${NOTE}`]);
    expect(conn.writes.at(-1)?.final).toBe(true);
  });

  it('shows an error message in place of a reply that had no text', async () => {
    const { clock, conn, src, base } = setup();
    const done = pump(src, base);
    src.fail(new ChatError('server', 'boom', { status: 500 }));
    await clock.advance(10);
    const r = await done;
    expect(r.outcome).toBe('failed');
    expect(conn.contentsIn('C1')).toEqual(['Something went wrong.']);
  });

  it('on abort stops reading, tells the source, and finishes the text as interrupted', async () => {
    const { clock, conn, src, base, stopped } = setup();
    const ac = new AbortController();
    const done = pump(src, { ...base, signal: ac.signal });
    src.push('Half');
    await clock.settle();
    ac.abort();
    await clock.advance(2000);
    const r = await done;
    expect(r.outcome).toBe('interrupted');
    expect(stopped()).toBe(1);
    expect(conn.contentsIn('C1')).toEqual([`Half${NOTE}`]);
  });

  it('after a 429 retries the coalesced write later and loses nothing', async () => {
    // No headers: the scheduler only knows the declared budget, which is larger than the platform's.
    const { clock, conn, src, base, limitedBuckets } = setup({ limit: 2, declaredLimit: 50, headers: false });
    const done = pump(src, { ...base, editIntervalMs: 100 });
    for (let i = 0; i < 10; i++) {
      src.push(`${i} `);
      await clock.advance(150);
    }
    src.end();
    await clock.advance(30_000);
    const r = await done;
    expect(r.outcome).toBe('done');
    expect(conn.rateLimitHits).toBeGreaterThan(0);
    expect(limitedBuckets[0]).toBe('test:channel:C1');
    expect(conn.contentsIn('C1')).toEqual(['0 1 2 3 4 5 6 7 8 9 ']);
    expect(conn.violations).toEqual([]);
  });

  it('a write that can never succeed fails the reply and stops reading', async () => {
    const { clock, conn, src, base } = setup();
    // like the relay, which cancels the upstream stream when the pump stops reading
    const done = pump(src, { ...base, onStop: () => src.end() });
    src.push('one');
    await clock.settle();
    conn.fault = () => new PlatformWriteError('Unknown Message', '10008', false);
    src.push(' two');
    await clock.advance(2000);
    const r = await done;
    expect(r.outcome).toBe('failed');
    expect(r.error).toBeInstanceOf(PlatformWriteError);
    await clock.settle();
    expect(src.returned).toBe(true);
    expect(conn.contentsIn('C1')).toEqual(['one']);
  });

  it('records progress after each write and puts a prefix before the first text', async () => {
    const { clock, src, base, progress } = setup();
    const done = pump(src, { ...base, prefix: () => '_(new)_\n' });
    src.push('x');
    await clock.settle();
    src.push('y');
    src.end();
    await clock.advance(2000);
    await done;
    expect(progress.map((p) => p.text)).toEqual(['_(new)_\nx', '_(new)_\nxy']);
    expect(progress[0]?.ids).toHaveLength(1);
  });

  it('finishes a message before its maximum age and continues in a new one', async () => {
    const { clock, conn, src, base } = setup({ maxMessageAgeMs: 5000, needsFinalWrite: true });
    const done = pump(src, base);
    for (let i = 0; i < 12; i++) {
      src.push(`${i}.`);
      await clock.advance(1000);
    }
    src.end();
    await clock.advance(5000);
    await done;
    const msgs = conn.messagesIn('C1');
    expect(msgs.length).toBeGreaterThanOrEqual(2);
    for (const m of msgs) expect(m.final).toBe(true);
    expect(msgs.map((m) => m.content).join('')).toBe(Array.from({ length: 12 }, (_, i) => `${i}.`).join(''));
    const writes = conn.writes;
    for (const m of msgs) {
      const last = writes.filter((w) => w.messageId === m.id).at(-1) as { at: number };
      expect(last.at - m.postedAt).toBeLessThan(5000);
    }
  });

  it('skips a final write that would change nothing, unless the sink needs the signal', async () => {
    for (const needsFinalWrite of [false, true]) {
      const { clock, conn, src, base } = setup({ needsFinalWrite });
      const done = pump(src, base);
      src.push('Hello');
      await clock.advance(1000);
      src.push(' world');
      await clock.advance(1000); // the edit shows the whole text
      src.end();
      await clock.advance(2000);
      await done;
      const [msg] = conn.messagesIn('C1');
      expect(msg?.content).toBe('Hello world');
      const writes = conn.writes.filter((w) => w.messageId === msg?.id);
      expect(writes.map((w) => w.text)).toEqual(
        needsFinalWrite ? ['Hello', 'Hello world', 'Hello world'] : ['Hello', 'Hello world'],
      );
      expect(msg?.final).toBe(needsFinalWrite);
    }
  });

  it('keeps budget for the final: it goes within one edit interval of the end, not after the bucket resets', async () => {
    const { clock, conn, src, base } = setup({ limit: 5 });
    // Edits every 250 ms would spend a 5-per-5 s bucket in the first second.
    const done = pump(src, { ...base, editIntervalMs: 250 });
    for (let i = 0; i < 9; i++) {
      src.push(`word${i} `);
      await clock.advance(500);
    }
    const endedAt = clock.now();
    src.end();
    await clock.advance(1000);
    await done;
    const [msg] = conn.messagesIn('C1');
    expect(msg?.content.trimEnd()).toBe(Array.from({ length: 9 }, (_, i) => `word${i}`).join(' '));
    const last = conn.writes.filter((w) => w.messageId === msg?.id).at(-1);
    expect(last?.final).toBe(true);
    expect((last?.at ?? Number.POSITIVE_INFINITY) - endedAt).toBeLessThanOrEqual(250);
    expect(conn.rateLimitHits).toBe(0);
  });

  it("records an edit's text before sending it, so crash repair never rolls a message back", async () => {
    const { clock, conn, src, base, progress } = setup();
    const seenAtEdit: Array<string | undefined> = [];
    conn.fault = (op, text) => {
      if (op === 'edit') seenAtEdit.push(progress.at(-1)?.text === text ? 'recorded' : progress.at(-1)?.text);
      return undefined;
    };
    const done = pump(src, base);
    src.push('one');
    await clock.advance(1000);
    src.push(' two');
    await clock.advance(1000);
    src.push(' three');
    src.end();
    await clock.advance(2000);
    await done;
    expect(seenAtEdit.length).toBeGreaterThanOrEqual(2);
    expect(seenAtEdit.every((v) => v === 'recorded')).toBe(true);
    expect(progress.at(-1)?.text).toBe('one two three');
  });
});
