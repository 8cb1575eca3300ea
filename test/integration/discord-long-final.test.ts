import { afterEach, expect, it } from 'vitest';
import { noopMetrics } from '../../src/core/metrics-port.js';
import type { HandleResult, IncomingMessage, MessageHandler, Place } from '../../src/core/ports.js';
import { type PumpResult, pump } from '../../src/core/pump.js';
import { RateLimitScheduler } from '../../src/core/scheduler.js';
import { silentLogger } from '../../src/logger.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { assertNoPings } from '../fakes/discord/writes.js';
import { ManualClock } from '../fakes/manual-clock.js';
import { connectTo, mention } from './discord/harness.js';
import type { DiscordConnector } from '../../src/connectors/discord/index.js';

// Issue 23: a fast reply of three messages under Discord's 5 writes per channel window. Posting a
// continuation while the reply streams commits it to that message's final too; when the channel
// has no write to spare for that, the continuation is posted once, whole, when it is full or the
// reply ends, so the reply's last write never waits for the window to reset. The upstream is
// driven step by step by the writes the bridge has made, on a manual clock; the fake's window is
// 60 s (real time), far longer than the test, so every write counts in one window.

const WINDOW = { limit: 5, windowMs: 60_000 };

/** A paragraph of exactly `n` characters, words only, no whitespace at either end. */
function paragraph(n: number, word: string): string {
  let s = '';
  for (let i = 0; s.length < n + 20; i++) s += `${word}${i % 10} `;
  return (
    s
      .slice(0, n - 1)
      .trimEnd()
      .padEnd(n - 1, 'x') + '.'
  );
}

const A = paragraph(1900, 'alpha');
const B = paragraph(1900, 'bravo');
const C = paragraph(1800, 'charlie');

class DrivenHandler implements MessageHandler {
  readonly clock = new ManualClock();
  readonly scheduler = new RateLimitScheduler({ clock: this.clock });
  result: Promise<PumpResult>;
  private resolve: (r: PumpResult) => void = () => {};
  /** Platform writes the reply's sink finished (the bridge has their answers). */
  private written = 0;
  private waiters: { n: number; wake: () => void }[] = [];
  constructor(private readonly source: (h: DrivenHandler) => AsyncIterable<string>) {
    this.result = new Promise((r) => {
      this.resolve = r;
    });
  }

  /**
   * Until the sink has finished `n` writes, then a few turns of the event loop: whatever the
   * writer does next with the text it has (another write, or waiting) has begun by then.
   */
  async afterWrites(n: number): Promise<void> {
    if (this.written < n) await new Promise<void>((wake) => this.waiters.push({ n, wake }));
    await this.clock.settle(5);
    // The upstream's next chunk comes a second later: the bridge's token model refills meanwhile
    // (its first guess is Discord's 5 per 5 s), while Discord's headers still count the window.
    await this.clock.advance(1000);
  }

  private count(): void {
    this.written += 1;
    for (const w of this.waiters.filter((x) => x.n <= this.written)) w.wake();
    this.waiters = this.waiters.filter((x) => x.n > this.written);
  }

  async handle(msg: IncomingMessage): Promise<HandleResult> {
    const sink = msg.sink;
    // The connector's own sink, observed: each write counted once Discord has answered it.
    const post = sink.post.bind(sink);
    const edit = sink.edit.bind(sink);
    sink.post = async (text, opts) => {
      const r = await post(text, opts);
      this.count();
      return r;
    };
    sink.edit = async (id, text, opts) => {
      const r = await edit(id, text, opts);
      this.count();
      return r;
    };
    const res = await pump(this.source(this), {
      sink,
      scheduler: this.scheduler,
      clock: this.clock,
      // Every chunk may be shown at once: the only pacing left is the channel's budget.
      editIntervalMs: 0,
      platform: 'discord',
      metrics: noopMetrics,
      logger: silentLogger,
      interruptedNote: '\n_(cut off)_',
      describeError: () => ({ outcome: 'failed', replacement: 'failed' }),
    });
    this.resolve(res);
    return { status: 'answered' };
  }
  async reset(_place: Place): Promise<void> {}
}

let fake: FakeDiscord | undefined;
let connector: DiscordConnector | undefined;
afterEach(async () => {
  await connector?.stop();
  await fake?.close();
  const record = fake?.record ?? [];
  connector = undefined;
  fake = undefined;
  assertNoPings(record);
});

it('a fast three-message reply spends at most the window: later parts are posted whole, the last at the end', async () => {
  fake = await startFakeDiscord({ rateLimit: WINDOW });
  const f = fake;
  const channel = f.addChannel(f.addGuild(), 'general');
  const writes = () =>
    f.record.filter((r) => r.channelId === channel && /\/messages(\/\d+)?$/.test(r.path) && r.method !== 'GET');
  const handler = new DrivenHandler(async function* (h) {
    yield A.slice(0, 40); // the first words: posted at once
    await h.afterWrites(1);
    yield A.slice(40, 80); // an intermediate edit, with budget to spare
    await h.afterWrites(2);
    yield `${A.slice(80)}\n\n${B.slice(0, 100)}`; // the first message is full: its final edit
    await h.afterWrites(3);
    // Two of the window's five writes are left, and one is held for the reply's final: the second
    // message's first 100 characters are not posted (that would leave the third part nothing).
    yield `${B.slice(100)}\n\n${C.slice(0, 100)}`; // the second is full: posted once, whole
    await h.afterWrites(4);
    yield C.slice(100); // the end: the third, posted once
  });
  connector = await connectTo(f, handler, {
    replyMode: 'inline',
    observer: handler.scheduler,
    assumedBudget: { limit: 5, windowMs: 5000 },
  });
  f.dispatchMessage({
    channelId: channel,
    authorId: '100000000000000001',
    content: mention(f, 'q'),
    mentionsBot: true,
  });
  const res = await handler.result;

  expect(res.outcome).toBe('done');
  expect(f.rateLimitHits).toBe(0);
  const seq = writes().map((w) => ({ method: w.method, status: w.status, content: w.content }));
  expect(seq).toEqual([
    { method: 'POST', status: 200, content: A.slice(0, 40) },
    { method: 'PATCH', status: 200, content: A.slice(0, 80) },
    // A cut at a paragraph break keeps the break at the end of the part (Discord does not show it).
    { method: 'PATCH', status: 200, content: `${A}\n\n` },
    { method: 'POST', status: 200, content: `${B}\n\n` },
    { method: 'POST', status: 200, content: C },
  ]);
  // The edits went to the first message; what the channel shows is the reply, cut at its paragraphs.
  const [first, second, third] = res.messageIds;
  expect(writes()[1]?.messageId).toBe(first);
  expect(writes()[2]?.messageId).toBe(first);
  expect(res.messageIds.map((id) => f.state.messages.get(id)?.content)).toEqual([`${A}\n\n`, `${B}\n\n`, C]);
  expect(new Set([first, second, third]).size).toBe(3);
}, 20_000);
