import { afterEach, describe, expect, it } from 'vitest';
import { noopMetrics } from '../../src/core/metrics-port.js';
import { MESSAGES } from '../../src/core/user-messages.js';
import { StoreFaults } from '../store/faulty-store.js';
import { type SlackStack, startSlackStack } from './slack-stack.js';

// Issue 37 on Slack: an event is acked as usual (200 in HTTP mode, the ack in Socket Mode) and,
// while every store call fails, held (the working indicator shows) and answered exactly once when
// the store is back, follow-ups in their thread's conversation; with the hold full, the busy
// notice, privately (ephemeral). Why held rather than refused: docs/storage.md. Real Bolt against
// the fake Slack, the relay with SQLite behind the fault wrapper, the emulator upstream.

let s: SlackStack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

function heldGauge() {
  let held = 0;
  let max = 0;
  const metrics = {
    ...noopMetrics,
    heldEvents: (n: number) => {
      held = n;
      max = Math.max(max, n);
    },
  };
  /** Bounded wait for the gauge (polled: the gauge has no event of its own here). */
  const atLeast = async (n: number, timeoutMs = 20_000) => {
    const until = Date.now() + timeoutMs;
    while (held < n) {
      if (Date.now() > until) throw new Error(`held stayed at ${held}, wanted ${n}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { metrics, atLeast, now: () => held, max: () => max };
}

for (const mode of ['http', 'socket'] as const) {
  describe(`Slack ${mode} mode`, () => {
    it('an outage with mentions and follow-ups arriving: acked, held, then answered exactly once each', async () => {
      const faults = new StoreFaults(37);
      const gauge = heldGauge();
      s = await startSlackStack({ mode, storeFaults: faults, metrics: gauge.metrics });
      const stack = s;
      const { fake } = stack;
      const deliver = async (event: Record<string, unknown>) => {
        if (mode === 'http') {
          expect((await fake.postSignedEvent(stack.eventsUrl, fake.envelope(event))).status).toBe(200);
        } else {
          await fake.sendEvent(event);
        }
      };
      // Two threads with a conversation each, before the outage (a mention comes as two events).
      const roots: string[] = [];
      for (const i of [1, 2]) {
        const post = fake.userPost({ channel: 'C1', text: `<@U0BOT> before ${i}`, user: 'U0ANN' });
        roots.push(post.ts);
        await deliver(post.message);
        await deliver(post.mention ?? {});
        await stack.settled(2 * i);
      }
      faults.down();
      const fresh = [1, 2].map((i) => fake.userPost({ channel: 'C1', text: `<@U0BOT> new ${i}`, user: 'U0ANN' }));
      for (const post of fresh) {
        await deliver(post.message);
        await deliver(post.mention ?? {});
      }
      for (const [i, root] of roots.entries()) {
        const follow = fake.userPost({ channel: 'C1', text: `follow ${i + 1}`, threadTs: root, user: 'U0ANN' });
        await deliver(follow.message);
      }
      await gauge.atLeast(4);
      expect(stack.chatRequests()).toHaveLength(2);
      // The working indicator (a reaction on the user's message in a channel) on each held one.
      for (const post of fresh) {
        await fake.waitForCall((c) => c.method === 'reactions.add' && c.args.timestamp === post.ts, 20_000);
      }
      faults.up();
      // 4 before, 4 for the new mentions (each answered once, its twin a duplicate), 2 follow-ups.
      await stack.settled(10);
      expect(fresh.map((p) => fake.botMessages('C1', p.ts).map((m) => m.text))).toEqual([
        ['You said: new 1'],
        ['You said: new 2'],
      ]);
      expect(roots.map((ts) => fake.botMessages('C1', ts).map((m) => m.text))).toEqual([
        ['You said: before 1', 'You said: follow 1'],
        ['You said: before 2', 'You said: follow 2'],
      ]);
      const calls = stack.chatRequests();
      expect(calls.map((c) => c.message).sort()).toEqual(
        ['before 1', 'before 2', 'new 1', 'new 2', 'follow 1', 'follow 2'].sort(),
      );
      const conv = (m: string) => calls.find((c) => c.message === m)?.conversationId;
      expect(conv('follow 1')).toBe(conv('before 1'));
      expect(conv('follow 2')).toBe(conv('before 2'));
      expect(gauge.now()).toBe(0);
      expect(gauge.max()).toBe(4);
    });
  });
}

it('Slack: the hold full: the busy notice goes privately; the held message is answered once', async () => {
  const faults = new StoreFaults(39);
  const gauge = heldGauge();
  s = await startSlackStack({ storeFaults: faults, metrics: gauge.metrics, relay: { maxHeldEvents: 1 } });
  const { fake } = s;
  faults.down();
  const kept = fake.userPost({ channel: 'C1', text: '<@U0BOT> kept', user: 'U0ANN' });
  await fake.sendEvent(kept.mention ?? {});
  await gauge.atLeast(1);
  const refused = fake.userPost({ channel: 'C1', text: '<@U0BOT> refused', user: 'U0BOB' });
  await fake.sendEvent(refused.mention ?? {});
  await s.settled(1);
  expect(fake.ephemerals.map((e) => ({ user: e.user, text: e.text }))).toEqual([
    { user: 'U0BOB', text: MESSAGES.overloaded },
  ]);
  faults.up();
  await s.settled(2);
  expect(fake.botMessages('C1', kept.ts).map((m) => m.text)).toEqual(['You said: kept']);
  expect(fake.botMessages('C1', refused.ts)).toEqual([]);
  expect(s.chatRequests().map((c) => c.message)).toEqual(['kept']);
});
