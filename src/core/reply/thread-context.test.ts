import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../logger.js';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import type { ContextSkipReason } from '../metrics-port.js';
import {
  type HistoryReader,
  type IncomingMessage,
  type PlaceMessage,
  PlatformRateLimitedError,
  type ReplySink,
} from '../ports.js';
import { RateLimitScheduler } from '../budget/scheduler.js';
import { HistoryCache, ThreadContext } from './thread-context.js';
import { assistantText, cleanHistory } from './upstream-message.js';
import { MESSAGES } from '../user-messages.js';

const at = (i: number) => new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString();
const user = (id: string, text: string): PlaceMessage => ({ id, author: 'Ann', role: 'user', text, ts: at(+id) });
const bot = (id: string, text: string): PlaceMessage => ({
  id,
  author: 'bridge',
  role: 'assistant',
  text,
  ts: at(+id),
});

describe('cleanHistory', () => {
  it('gives the history oldest first, without the current message, notices, notes and what came before a reset', () => {
    const newestFirst = [
      user('9', '<current>'),
      bot('8', `_(reply interrupted)_ is how it ended:\n\nthe answer${MESSAGES.interrupted}`),
      user('7', 'question two'),
      bot('6', `${MESSAGES.renewedWithContext}an answer`),
      bot('5', MESSAGES.slowDown),
      bot('4', MESSAGES.tooLong(4000)),
      user('3', 'question one'),
      bot('2', MESSAGES.reset),
      user('1', 'before the reset'),
    ];
    expect(cleanHistory(newestFirst, '9', 30).map((m) => [m.role, m.text])).toEqual([
      ['user', 'question one'],
      ['assistant', 'an answer'],
      ['user', 'question two'],
      ['assistant', '_(reply interrupted)_ is how it ended:\n\nthe answer'],
    ]);
    expect(cleanHistory(newestFirst, '9', 2).map((m) => m.text)).toEqual(['question two', expect.any(String)]);
  });

  it('recognises notices as Slack renders them (entities, zero-width spaces)', () => {
    expect(assistantText('_(Earlier context was not kept; this is a new conversation.)_')).toBeUndefined();
    expect(assistantText('*The assistant is busy right now, please try again shortly.*')).toBeUndefined();
    expect(
      assistantText(
        'Several messages are already waiting\u200B for a reply here. Please wait for them before sending more.',
      ),
    ).toBeUndefined();
    expect(assistantText('A &amp; B')).toBe('A &amp; B');
    expect(assistantText(MESSAGES.badRequest(418))).toBeUndefined();
    expect(assistantText(`reply${MESSAGES.replyDeadline(300)}`)).toBe('reply');
    expect(assistantText(`long${MESSAGES.replyTooLong(40000)}`)).toBe('long');
  });
});

describe('HistoryCache', () => {
  it('forgets the least recently used place and expired entries', () => {
    const cache = new HistoryCache(2, 1000);
    cache.set('a', 0, []);
    cache.set('b', 0, []);
    expect(cache.get('a', 10)).toEqual([]);
    cache.set('c', 10, []);
    expect(cache.get('b', 10)).toBeUndefined();
    expect(cache.get('a', 500)).toEqual([]);
    expect(cache.get('c', 2000)).toBeUndefined();
  });
});

describe('ThreadContext.load', () => {
  const sink = {} as ReplySink;
  const message = (history: HistoryReader): IncomingMessage => ({
    eventId: 'e1',
    place: { platform: 'test', channelId: 'c1', threadId: 't1' },
    origin: { platform: 'test', channelId: 'c1', threadId: 't1' },
    messageId: '9',
    userId: 'u1',
    text: 'hi',
    isDm: false,
    mentionsBot: true,
    isFromBot: false,
    receivedAt: 0,
    sink,
    history,
  });
  const setup = () => {
    const clock = new ManualClock(0);
    const scheduler = new RateLimitScheduler({ clock });
    const skipped: ContextSkipReason[] = [];
    const ctx = new ThreadContext({
      scheduler,
      clock,
      settings: { mode: 'message', maxMessages: 5, maxChars: 6000 },
      metrics: { contextSkipped: (_platform, reason) => skipped.push(reason) },
    });
    return { clock, ctx, skipped };
  };
  const place = { platform: 'test' as const, channelId: 'c1', threadId: 't1' };

  it('reads once per place (cached) and asks for the messages before the current one', async () => {
    const { ctx } = setup();
    const asked: unknown[] = [];
    const reader: HistoryReader = {
      buckets: [{ key: 'read', limit: 10, windowMs: 1000 }],
      recent: (req) => {
        asked.push(req);
        return Promise.resolve([user('2', 'two'), user('1', 'one')]);
      },
    };
    expect((await ctx.load(message(reader), silentLogger)).map((m) => m.text)).toEqual(['one', 'two']);
    expect((await ctx.load(message(reader), silentLogger)).map((m) => m.text)).toEqual(['one', 'two']);
    expect(asked).toEqual([{ limit: 6, beforeMessageId: '9' }]);
  });

  it('goes on without context when the read fails or takes longer than the timeout', async () => {
    const { clock, ctx, skipped } = setup();
    const failing: HistoryReader = { buckets: [], recent: () => Promise.reject(new Error('boom')) };
    expect(await ctx.load(message(failing), silentLogger)).toEqual([]);
    ctx.changed({ platform: 'test', channelId: 'c1', threadId: 't1' });
    const hanging: HistoryReader = { buckets: [], recent: () => new Promise<PlaceMessage[]>(() => {}) };
    const loading = ctx.load(message(hanging), silentLogger);
    await Promise.resolve();
    await clock.advance(2000);
    expect(await loading).toEqual([]);
    expect(skipped).toEqual(['error', 'timeout']);
  });

  it('a read the learned budget cannot pay now is skipped at once: never asked, never waited for', async () => {
    const { ctx, skipped } = setup();
    let reads = 0;
    const limited: HistoryReader = {
      buckets: [{ key: 'slack:T1:history', limit: 50, windowMs: 60_000 }],
      recent: () => {
        reads++;
        // Slack's tight history limit for apps outside the Marketplace: one a minute.
        return reads === 1
          ? Promise.resolve([user('1', 'one')])
          : Promise.reject(new PlatformRateLimitedError('slack:T1:history', 60_000));
      },
    };
    expect((await ctx.load(message(limited), silentLogger)).map((m) => m.text)).toEqual(['one']);
    ctx.changed(place);
    // The 429 teaches the bucket; the reply goes on without context.
    expect(await ctx.load(message(limited), silentLogger)).toEqual([]);
    // From now on the budget cannot pay: skipped without a read and without the clock moving.
    for (let i = 0; i < 5; i++) {
      ctx.changed(place);
      expect(await ctx.load(message(limited), silentLogger)).toEqual([]);
    }
    expect(reads).toBe(2);
    expect(skipped).toEqual(['error', 'budget', 'budget', 'budget', 'budget', 'budget']);
  });

  it('a read queued behind another is skipped rather than waited for', async () => {
    const { ctx, skipped } = setup();
    const bucket = { key: 'one-a-minute', limit: 1, windowMs: 60_000 };
    let release: (m: PlaceMessage[]) => void = () => {};
    const slow: HistoryReader = {
      buckets: [bucket],
      recent: () =>
        new Promise<PlaceMessage[]>((r) => {
          release = r;
        }),
    };
    const first = ctx.load(message(slow), silentLogger);
    const other = { ...message(slow), place: { ...place, threadId: 't2' }, origin: { ...place, threadId: 't2' } };
    expect(await ctx.load(other, silentLogger)).toEqual([]);
    release([user('1', 'one')]);
    expect((await first).map((m) => m.text)).toEqual(['one']);
    expect(skipped).toEqual(['budget']);
  });
});
