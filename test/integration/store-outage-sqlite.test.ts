import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { noopMetrics } from '../../src/core/metrics-port.js';
import { mention } from './discord/harness.js';
import { ANN, type Stack, startStack } from './discord/stack.js';
import { type SlackStack, startSlackStack } from './slack-stack.js';

// Issue 37 with SQLite itself failing (no wrapper): the file read-only, or locked by another
// process, while messages arrive; it recovers by itself when the file is writable again (the
// store's own check, at most 2 s apart while unhealthy). Each message is answered exactly once,
// follow-ups in their thread's conversation. Real discord.js / Bolt against the fakes.

let d: Stack | undefined;
let sl: SlackStack | undefined;
const others: Database.Database[] = [];
afterEach(async () => {
  for (const o of others.splice(0)) o.close();
  await d?.close();
  await sl?.close();
  d = undefined;
  sl = undefined;
});

function heldGauge() {
  let held = 0;
  const metrics = { ...noopMetrics, heldEvents: (n: number) => (held = n) };
  /** Bounded wait for the gauge (polled: the gauge has no event of its own here). */
  const atLeast = async (n: number, timeoutMs = 20_000) => {
    const until = Date.now() + timeoutMs;
    while (held < n) {
      if (Date.now() > until) throw new Error(`held stayed at ${held}, wanted ${n}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { metrics, atLeast, now: () => held };
}

async function discordOutage(fault: (s: Stack) => () => void): Promise<void> {
  const gauge = heldGauge();
  d = await startStack({ metrics: gauge.metrics });
  const s = d;
  const { fake, channelId } = s;
  const first = String(
    fake.dispatchMessage({ channelId, authorId: ANN, content: mention(fake, 'before'), mentionsBot: true }).id,
  );
  await fake.waitUntil(() => fake.botMessages(first).find((m) => m.content === 'You said: before'));
  const heal = fault(s);
  const fresh = String(
    fake.dispatchMessage({ channelId, authorId: ANN, content: mention(fake, 'new'), mentionsBot: true }).id,
  );
  fake.dispatchMessage({ channelId: first, authorId: ANN, content: 'follow' });
  await gauge.atLeast(2);
  expect(s.store.health().ok).toBe(false);
  expect(s.emu.requests.filter((r) => r.endpoint === 'stream')).toHaveLength(1);
  heal();
  const texts = (id: string) => fake.botMessages(id).map((m) => m.content);
  await fake.waitUntil(
    () => texts(fresh).join() === 'You said: new' && texts(first).at(-1) === 'You said: follow',
    30_000,
    'both held messages answered in full',
  );
  expect(fake.botMessages(fresh).map((m) => m.content)).toEqual(['You said: new']);
  expect(fake.botMessages(first).map((m) => m.content)).toEqual(['You said: before', 'You said: follow']);
  const calls = s.emu.requests.filter((r) => r.endpoint === 'stream');
  expect(calls.map((c) => c.message).sort()).toEqual(['before', 'follow', 'new']);
  const conv = (m: string) => calls.find((c) => c.message === m)?.conversationId;
  expect(conv('follow')).toBe(conv('before'));
  expect(s.store.health().ok).toBe(true);
  expect(gauge.now()).toBe(0);
}

it('Discord, SQLite read-only then writable again: held, then answered once each by itself', async () => {
  await discordOutage((s) => {
    // What SQLite does on a file it could only open read-only (chmod stops nothing as root).
    s.store.db.pragma('query_only = ON');
    return () => s.store.db.pragma('query_only = OFF');
  });
});

it('Discord, SQLite locked by another process, then released: held, then answered once each by itself', async () => {
  await discordOutage((s) => {
    const other = new Database(s.store.location);
    others.push(other);
    other.exec('BEGIN EXCLUSIVE');
    return () => other.exec('ROLLBACK');
  });
});

it('Slack (HTTP mode), SQLite read-only then writable: acked 200, held, answered once', async () => {
  const gauge = heldGauge();
  sl = await startSlackStack({ mode: 'http', metrics: gauge.metrics });
  const s = sl;
  const { fake } = s;
  const post = fake.userPost({ channel: 'C1', text: '<@U0BOT> while read-only', user: 'U0ANN' });
  s.store.db.pragma('query_only = ON');
  for (const ev of [post.message, post.mention ?? {}]) {
    expect((await fake.postSignedEvent(s.eventsUrl, fake.envelope(ev))).status).toBe(200);
  }
  await gauge.atLeast(1);
  expect(s.chatRequests()).toHaveLength(0);
  s.store.db.pragma('query_only = OFF');
  await s.settled(2);
  expect(s.results.map((r) => r.status).sort()).toEqual(['answered', 'duplicate']);
  expect(fake.botMessages('C1', post.ts).map((m) => m.text)).toEqual(['You said: while read-only']);
  expect(s.chatRequests()).toHaveLength(1);
});
