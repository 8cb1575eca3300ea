import { expect, it } from 'vitest';
import { noopMetrics } from '../../src/core/metrics-port.js';
import { MESSAGES } from '../../src/core/user-messages.js';
import { StoreFaults } from '../store/faulty-store.js';
import { mention } from './discord/harness.js';
import { ANN, type Stack, stackPerTest } from './discord/stack.js';

// Issue 37 on Discord (the gateway never delivers a message again): with the store fault mode on,
// messages that arrive while every store call fails are held, show the typing indicator, and are
// answered exactly once each when the store is back, follow-ups in their thread's conversation;
// with the hold full, the busy notice. Real discord.js against the fake Discord, the relay with
// SQLite behind the fault wrapper, the upstream client against the emulator.

const start = stackPerTest();

/** The relay's held-message gauge, and a bounded wait on it (the relay reports each change). */
function heldGauge() {
  let held = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const metrics = {
    ...noopMetrics,
    heldEvents: (n: number) => {
      held = n;
      for (const w of waiters.splice(0)) {
        if (held >= w.n) w.resolve();
        else waiters.push(w);
      }
    },
  };
  const atLeast = (n: number, timeoutMs = 20_000) =>
    held >= n
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error(`held stayed at ${held}, wanted ${n}`)), timeoutMs);
          waiters.push({
            n,
            resolve: () => {
              clearTimeout(t);
              resolve();
            },
          });
        });
  return { metrics, atLeast, now: () => held };
}

function upstreamCalls(stack: Stack) {
  return stack.emu.requests.filter((r) => r.endpoint === 'stream' || r.endpoint === 'send');
}

it('an outage with mentions and follow-ups arriving: each held, then answered exactly once with its conversation', async () => {
  const faults = new StoreFaults(37);
  const gauge = heldGauge();
  const s = await start({ storeFaults: faults, metrics: gauge.metrics });
  const { fake, channelId } = s;
  // Three threads with a conversation each, before the outage.
  const threads: string[] = [];
  for (const i of [1, 2, 3]) {
    const { threadId } = s.ask(`before ${i}`);
    threads.push(threadId);
    await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === `You said: before ${i}`));
  }
  const before = upstreamCalls(s).length;

  faults.down();
  // Three new mentions and three follow-ups (two in the first thread: their order is kept).
  const mentions = [1, 2, 3].map((i) =>
    String(
      fake.dispatchMessage({ channelId, authorId: ANN, content: mention(fake, `new ${i}`), mentionsBot: true }).id,
    ),
  );
  fake.dispatchMessage({ channelId: threads[0] ?? '', authorId: ANN, content: 'follow a' });
  fake.dispatchMessage({ channelId: threads[1] ?? '', authorId: ANN, content: 'follow b' });
  fake.dispatchMessage({ channelId: threads[0] ?? '', authorId: ANN, content: 'follow a2' });
  await gauge.atLeast(5); // the second follow-up in thread 0 waits behind the first
  // While down: nothing asked upstream, nothing answered, the user sees typing where they wrote.
  expect(upstreamCalls(s)).toHaveLength(before);
  for (const t of mentions) expect(fake.botMessages(t)).toHaveLength(0);
  await fake.waitUntil(() => [...mentions, threads[0], threads[1]].every((t) => fake.state.typing.includes(t ?? '')));

  faults.up();
  const want = new Map<string, string[]>([
    ...mentions.map((t, i): [string, string[]] => [t, [`You said: new ${i + 1}`]]),
    [threads[0] ?? '', ['You said: before 1', 'You said: follow a', 'You said: follow a2']],
    [threads[1] ?? '', ['You said: before 2', 'You said: follow b']],
    [threads[2] ?? '', ['You said: before 3']],
  ]);
  const shown = () => [...want.keys()].map((t) => fake.botMessages(t).map((m) => m.content));
  await fake.waitUntil(
    // Every reply final (a streamed one shows its text in steps); a double would never match.
    () => JSON.stringify(shown()) === JSON.stringify([...want.values()]),
    30_000,
    'every held message answered in full',
  );
  expect(shown()).toEqual([...want.values()]);
  // Exactly once upstream each; the follow-ups in their thread's conversation.
  const calls = upstreamCalls(s);
  expect(calls.map((c) => c.message).sort()).toEqual(
    ['before 1', 'before 2', 'before 3', 'new 1', 'new 2', 'new 3', 'follow a', 'follow b', 'follow a2'].sort(),
  );
  const conv = (m: string) => calls.find((c) => c.message === m)?.conversationId;
  expect(conv('follow a')).toBe(conv('before 1'));
  expect(conv('follow a2')).toBe(conv('before 1'));
  expect(conv('follow b')).toBe(conv('before 2'));
  expect(gauge.now()).toBe(0);
});

it('the hold full: a message refused with the busy notice; the held one answered once the store is back', async () => {
  const faults = new StoreFaults(38);
  const gauge = heldGauge();
  const s = await start({ storeFaults: faults, metrics: gauge.metrics, relaySettings: { maxHeldEvents: 1 } });
  const { fake, channelId } = s;
  faults.down();
  const kept = s.ask('kept').threadId;
  await gauge.atLeast(1);
  const refused = s.ask('refused').threadId;
  // The busy notice where the reply would have been (Discord has no private notice for a message).
  await fake.waitUntil(
    () => [...fake.botMessages(refused), ...fake.botMessages(channelId)].some((m) => m.content === MESSAGES.overloaded),
    20_000,
    'the busy notice',
  );
  faults.up();
  await fake.waitUntil(() => fake.botMessages(kept).find((m) => m.content === 'You said: kept'), 30_000);
  expect(fake.botMessages(kept).map((m) => m.content)).toEqual(['You said: kept']);
  expect(upstreamCalls(s).map((c) => c.message)).toEqual(['kept']);
});
