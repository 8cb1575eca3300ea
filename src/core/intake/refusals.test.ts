import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { silentLogger } from '../../logger.js';
import type { BucketRef, IncomingMessage, ReplySink } from '../ports.js';
import { Refusals } from './refusals.js';
import { RateLimitScheduler } from '../budget/scheduler.js';

// Refusal notices: private where the sink can, else one public notice per user a minute, sent with
// the lowest priority (behind every write of a reply). The clock is moved by hand.

const posts: BucketRef = { key: 'chan:post', limit: 1, windowMs: 1000 };

function message(userId: string, sent: string[], privately: boolean): IncomingMessage {
  const sink: ReplySink = {
    maxChars: 2000,
    target: { place: { platform: 'test', channelId: 'c1' } },
    buckets: () => [posts],
    showWorking: async () => {},
    clearWorking: async () => {},
    post: async (text) => (sent.push(`post:${userId}:${text}`), { messageId: String(sent.length) }),
    edit: async () => ({}),
    ...(privately
      ? {
          refusal: {
            private: true,
            buckets: [{ key: 'chan:ephemeral', limit: 100, windowMs: 60_000 }],
            send: async (text: string) => (sent.push(`private:${userId}:${text}`), {}),
          },
        }
      : {}),
  };
  return {
    eventId: `e-${Math.random()}`,
    place: { platform: 'test', channelId: 'c1' },
    origin: { platform: 'test', channelId: 'c1' },
    messageId: 'm',
    userId,
    text: 'hi',
    isDm: false,
    mentionsBot: true,
    isFromBot: false,
    receivedAt: 0,
    sink,
  };
}

describe('Refusals', () => {
  it('tells every refusal privately where the sink can', async () => {
    const clock = new ManualClock();
    const sent: string[] = [];
    const r = new Refusals({ scheduler: new RateLimitScheduler({ clock }), clock, logger: silentLogger });
    const outcomes = await Promise.all([1, 2, 3].map(() => r.tell(message('u1', sent, true), 'slow down')));
    expect(outcomes).toEqual(['private', 'private', 'private']);
    expect(sent).toEqual(['private:u1:slow down', 'private:u1:slow down', 'private:u1:slow down']);
  });

  it('posts at most one public notice per user a minute, each user its own', async () => {
    const clock = new ManualClock();
    const sent: string[] = [];
    const r = new Refusals({ scheduler: new RateLimitScheduler({ clock, marginMs: 0 }), clock, logger: silentLogger });
    const first = [r.tell(message('u1', sent, false), 'no'), r.tell(message('u1', sent, false), 'no')];
    const other = r.tell(message('u2', sent, false), 'no');
    await clock.advance(2000);
    expect(await Promise.all([...first, other])).toEqual(['public', 'suppressed', 'public']);
    await clock.advance(57_000); // 59 s after the first
    expect(await r.tell(message('u1', sent, false), 'no')).toBe('suppressed');
    await clock.advance(1000);
    const again = r.tell(message('u1', sent, false), 'no');
    await clock.advance(1000);
    expect(await again).toBe('public');
    expect(sent).toEqual(['post:u1:no', 'post:u2:no', 'post:u1:no']);
    expect(r.size).toBe(1); // u2 was forgotten after its minute
  });

  it('waits behind every write of a reply in the same bucket', async () => {
    const clock = new ManualClock();
    const sent: string[] = [];
    const scheduler = new RateLimitScheduler({ clock, marginMs: 0 });
    const r = new Refusals({ scheduler, clock, logger: silentLogger });
    const order: string[] = [];
    await scheduler.acquire([posts], 'first', undefined, 'x'); // the budget is spent for a second
    const told = r.tell(message('flood', sent, false), 'busy').then(() => order.push('notice'));
    void scheduler.acquire([posts], 'edit', undefined, 'y').then(() => order.push('edit'));
    void scheduler.acquire([posts], 'first', undefined, 'z').then(() => order.push('first'));
    await clock.advance(5000);
    await told;
    expect(order).toEqual(['first', 'edit', 'notice']);
  });
});
