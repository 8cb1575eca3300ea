import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../resilience/harness.js';
import { PG_TEST_URL, pgSkipReason } from '../support/pg.js';
import { closeGroups, group } from '../support/replica-group.js';

// Issue 37's case, with real `assistant-bridge start` processes: two replicas on one PostgreSQL
// database of the test's own (Slack in HTTP mode). Every connection of both is terminated and the
// database takes no new one (ALLOW_CONNECTIONS false, which holds for superusers too) while 12
// messages arrive: 6 new mentions and 6 follow-ups in threads that have a conversation. Each is
// acked 200, held (the gauge says so, /readyz says 503 naming the database), and once the database
// takes connections again each is answered exactly once, the follow-ups in their thread's
// conversation; no replica exits. The lease is short (3 s), so the outage outlasts it.

const skip = await pgSkipReason();
if (skip) console.log(`replica outage tests skipped: ${skip}`);
afterEach(closeGroups);

async function admin(sql: string, values: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: PG_TEST_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(sql, values);
  } finally {
    await client.end();
  }
}

/** The sum of one gauge over the replicas' /metrics. */
async function gaugeSum(bases: string[], name: string): Promise<number> {
  let sum = 0;
  for (const base of bases) {
    const text = await (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(2000) })).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    sum += Number(line?.split(' ')[1] ?? 'NaN');
  }
  return sum;
}

describe.skipIf(skip !== undefined)('an outage of the shared PostgreSQL', () => {
  it('2 replicas, 12 Slack messages during the outage: all acked, held, answered once when it is back', async () => {
    const g = await group(2, { env: { REPLICA_LEASE_SECONDS: '3' } });
    const name = new URL(g.database.url).pathname.slice(1);
    const { slack, emu } = g;
    const bases = g.replicas.map((r) => r.base);
    const deliver = async (i: number, event: Record<string, unknown>) => {
      const started = Date.now();
      const res = await slack.postSignedEvent(g.eventsUrl(i % 2), slack.envelope(event));
      expect(res.status).toBe(200);
      return Date.now() - started;
    };
    // Each thread and new mention in a channel of its own: Slack posts about one message a second
    // per channel, which would time the platform here, not the hold.
    const channelOf = new Map<string, string>();
    const repliesTo = (ts: string) => slack.botMessages(channelOf.get(ts) ?? '', ts).map((m) => m.text);
    // Six threads with a conversation each.
    const roots: string[] = [];
    for (let i = 1; i <= 6; i++) {
      const post = slack.userPost({ channel: `C${i}`, text: `<@U0BOT> before ${i}`, user: 'U0ANN' });
      channelOf.set(post.ts, `C${i}`);
      roots.push(post.ts);
      await deliver(i, post.mention ?? {});
    }
    await waitFor(
      () => roots.every((ts, i) => repliesTo(ts).join() === `You said: before ${i + 1}`),
      30_000,
      () => `threads answered: ${JSON.stringify(roots.map(repliesTo))}`,
    );
    const before = emu.requests.filter((r) => r.endpoint === 'stream' || r.endpoint === 'send').length;

    await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    await admin('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
    const fresh: string[] = [];
    const acks: number[] = [];
    for (let i = 1; i <= 6; i++) {
      const post = slack.userPost({ channel: `N${i}`, text: `<@U0BOT> new ${i}`, user: 'U0ANN' });
      channelOf.set(post.ts, `N${i}`);
      fresh.push(post.ts);
      acks.push(await deliver(i, post.mention ?? {}));
      const follow = slack.userPost({
        channel: `C${i}`,
        text: `follow ${i}`,
        threadTs: roots[i - 1] ?? '',
        user: 'U0ANN',
      });
      acks.push(await deliver(i + 1, follow.message));
    }
    // Acked within Slack's 3 s each (generous on a busy machine: a connection attempt is refused at once).
    expect(Math.max(...acks)).toBeLessThan(3000);
    await waitFor(
      async () => (await gaugeSum(bases, 'bridge_held_events')) === 12,
      30_000,
      () => 'all 12 held',
    );
    for (const r of g.replicas) {
      const ready = await r.readyz();
      expect(ready.status).toBe(503);
      expect(ready.body).toMatch(/database/);
    }
    expect(fresh.map(repliesTo)).toEqual(fresh.map(() => []));

    await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
    const back = Date.now();
    const want = [
      ...fresh.map((_, i) => [`You said: new ${i + 1}`]),
      ...roots.map((_, i) => [`You said: before ${i + 1}`, `You said: follow ${i + 1}`]),
    ];
    const shown = () => [...fresh, ...roots].map(repliesTo);
    await waitFor(
      // Every reply final (an edited one shows its text in steps); a double would never match.
      () => JSON.stringify(shown()) === JSON.stringify(want),
      60_000,
      () => {
        if (process.env.OUTAGE_LOGS) {
          for (const [i, r] of g.replicas.entries())
            writeFileSync(`${process.env.OUTAGE_LOGS}-${i}.log`, r.log.join('\n'));
        }
        return `answers after the outage: ${JSON.stringify(shown())}`;
      },
    );
    const tookMs = Date.now() - back;
    console.log(`all 12 held messages answered ${tookMs} ms after the database came back`);
    expect(shown()).toEqual(want);
    const calls = emu.requests.filter((r) => r.endpoint === 'stream' || r.endpoint === 'send');
    expect(calls).toHaveLength(before + 12);
    // Once each; a follow-up goes on in its thread's conversation (the emulator's form names it in
    // its first reply: a follow-up that lost it would be sent without one), one per thread.
    const asked = (m: string) => calls.filter((c) => c.message === m);
    const followIds = roots.map((_, i) => asked(`follow ${i + 1}`).map((c) => c.conversationId));
    for (const ids of followIds) expect(ids).toEqual([expect.any(String)]);
    expect(new Set(followIds.flat()).size).toBe(6);
    for (let i = 1; i <= 6; i++) expect(asked(`new ${i}`)).toHaveLength(1);
    // No replica exited; both ready again, nothing held, and the log says what happened.
    for (const r of g.replicas) {
      expect(r.exitCode).toBeUndefined();
      await r.waitReady(30_000);
    }
    // A message held at the reply step leaves the hold when its whole reply returns, and the
    // reply's store writes after its final text (the reply in flight cleared) come after what the
    // user sees: the gauge reaches 0 a moment after the texts, on a busy machine seconds after.
    await waitFor(
      async () => (await gaugeSum(bases, 'bridge_held_events')) === 0,
      30_000,
      () => 'nothing held once all is answered',
    );
    const logs = g.replicas.flatMap((r) => r.log);
    expect(logs.some((l) => l.includes('message held until it is back'))).toBe(true);
    expect(logs.some((l) => l.includes('held message released'))).toBe(true);
  }, 240_000);
});
