import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../logger.js';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import type { ContextSkipReason } from '../metrics-port.js';
import {
  type PlaceHistoryPage,
  type HistoryReader,
  type HistoryRequest,
  type IncomingMessage,
  type PlaceMessage,
  PlatformRateLimitedError,
  type ReplySink,
} from '../ports.js';
import { RateLimitScheduler } from '../budget/scheduler.js';
import { MAX_PAGES, mergeNewestFirst, ThreadContext } from './thread-context.js';

// Context from capped reads and the record of seen messages: the context ends with the messages
// just before the user's, whichever end a platform's pages start from, and whatever it refuses.

const msg = (n: number): PlaceMessage => ({
  id: String(n),
  author: 'Ann',
  role: 'user',
  text: `m${n}`,
  ts: new Date(n * 1000).toISOString(),
});
/** Messages from..to, newest first. */
const span = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => msg(to - k));
const texts = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => `m${from + k}`);

const USER_MESSAGE = 41;

/** A thread of 40 messages before the user's, read 15 a call from one end. */
function capped(from: 'oldest' | 'newest', refuseAfter = Infinity): HistoryReader & { asked: HistoryRequest[] } {
  const asked: HistoryRequest[] = [];
  return {
    asked,
    buckets: [{ key: 'read', limit: 50, windowMs: 60_000 }],
    recent(req) {
      asked.push(req);
      if (asked.length > refuseAfter) return Promise.reject(new PlatformRateLimitedError('read', 60_000));
      const page = Number(req.cursor ?? '0');
      const [lo, hi] =
        from === 'oldest'
          ? [1 + page * 15, Math.min(40, 15 + page * 15)]
          : [Math.max(1, 26 - page * 15), 40 - page * 15];
      const more = from === 'oldest' ? hi < 40 : lo > 1;
      const out: PlaceHistoryPage = { messages: span(lo, hi) };
      if (more) out.next = { cursor: String(page + 1), direction: from === 'oldest' ? 'newer' : 'older' };
      return Promise.resolve(out);
    },
  };
}

describe('ThreadContext.load under capped reads', () => {
  const message = (history: HistoryReader): IncomingMessage => ({
    eventId: 'e1',
    place: { platform: 'test', channelId: 'c1', threadId: 't1' },
    origin: { platform: 'test', channelId: 'c1', threadId: 't1' },
    messageId: String(USER_MESSAGE),
    userId: 'u1',
    text: 'hi',
    isDm: false,
    mentionsBot: true,
    isFromBot: false,
    receivedAt: 0,
    sink: {} as ReplySink,
    history,
  });
  const setup = () => {
    const clock = new ManualClock(0);
    const skipped: ContextSkipReason[] = [];
    const ctx = new ThreadContext({
      scheduler: new RateLimitScheduler({ clock }),
      clock,
      settings: { mode: 'message', maxMessages: 20, maxChars: 6000 },
      metrics: { contextSkipped: (_p, reason) => skipped.push(reason) },
    });
    return { ctx, skipped };
  };

  it('pages from the old end continue to the messages just before the user', async () => {
    const { ctx } = setup();
    const reader = capped('oldest');
    expect((await ctx.load(message(reader), silentLogger)).map((m) => m.text)).toEqual(texts(21, 40));
    expect(reader.asked.map((r) => r.cursor)).toEqual([undefined, '1', '2']);
  });

  it('pages from the newest end stop once enough are held', async () => {
    const { ctx } = setup();
    const reader = capped('newest');
    expect((await ctx.load(message(reader), silentLogger)).map((m) => m.text)).toEqual(texts(21, 40));
    expect(reader.asked).toHaveLength(2);
  });

  it('a refused later page keeps the pages read and the record gives the newest end', async () => {
    const { ctx, skipped } = setup();
    const reader = {
      ...capped('oldest', 1),
      recorded: (req: HistoryRequest) => Promise.resolve(span(31, 40).slice(0, req.limit)),
    };
    expect((await ctx.load(message(reader), silentLogger)).map((m) => m.text)).toEqual([
      ...texts(6, 15),
      ...texts(31, 40),
    ]);
    expect(skipped).toEqual([]);
  });

  it('a refused first read: the record alone, the skip counted', async () => {
    const { ctx, skipped } = setup();
    const reader = { ...capped('oldest', 0), recorded: () => Promise.resolve(span(25, 40)) };
    expect((await ctx.load(message(reader), silentLogger)).map((m) => m.text)).toEqual(texts(25, 40));
    expect(skipped).toEqual(['error']);
  });

  it('never reads more than MAX_PAGES pages', async () => {
    const { ctx } = setup();
    let calls = 0;
    const endless: HistoryReader = {
      buckets: [],
      recent: () => {
        calls++;
        return Promise.resolve({ messages: [msg(calls)], next: { cursor: String(calls), direction: 'newer' } });
      },
    };
    await ctx.load(message(endless), silentLogger);
    expect(calls).toBe(MAX_PAGES);
  });
});

describe('mergeNewestFirst', () => {
  it('keeps each id once, the newest first, numbers compared as numbers', () => {
    const a = [msg(10), msg(9)];
    const b = [msg(9), msg(100), msg(2)];
    expect(mergeNewestFirst(a, b, 3).map((m) => m.id)).toEqual(['100', '10', '9']);
  });
});
