import { afterEach, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../src/core/user-messages.js';
import { waitFor } from '../resilience/harness.js';
import { pgSkipReason } from '../support/pg.js';
import { closeGroups, type Group, group, repliesIn, until } from '../support/replica-group.js';

const skip = await pgSkipReason();
if (skip) console.log(`replica SIGTERM tests skipped: ${skip}`);
afterEach(closeGroups);

// SIGTERM of one replica (Slack HTTP mode) while the load balancer still sends it events, as it
// does until it sees /readyz at 503: an event acked with 200 is answered (by the stopping replica,
// within its drain, or by a survivor); one it cannot answer is not acked (503), and Slack's
// retry (here: the same event again with a retry number) goes to the survivor. Nobody sees a
// "restarting" notice, nothing is answered twice, the stopping replica exits 0.

type Outcome = { to: number; status: number | 'refused' };

/** Posts the event to replica `to`; on 503 or a closed port, Slack retries: to the other one. */
async function deliver(g: Group, body: Record<string, unknown>, to: number): Promise<Outcome[]> {
  const tried: Outcome[] = [];
  for (let attempt = 0; attempt < 2; attempt++) {
    const target = attempt === 0 ? to : 1 - to;
    let status: number | 'refused';
    try {
      status = (await g.slack.postSignedEvent(g.eventsUrl(target), body, attempt > 0 ? { retryNum: attempt } : {}))
        .status;
    } catch {
      status = 'refused'; // the stopping replica's server has closed
    }
    tried.push({ to: target, status });
    if (status === 200) return tried;
  }
  throw new Error(`event not acked by either replica: ${JSON.stringify(tried)}`);
}

describe.skipIf(skip !== undefined)('SIGTERM of a replica that still receives events', () => {
  it('every event acked with 200 is answered once; after the drain began, events get 503 and the survivor answers', async () => {
    const g = await group(2);
    const places = Array.from({ length: 6 }, (_, i) => `D${40 + i}`);
    const want = new Map<string, string[]>();
    const outcomes: Outcome[][] = [];
    const send = async (channel: string, to: number, round: number) => {
      const text = `${channel} m${round} [chunks 10] [delay 40]`;
      want.set(channel, [...(want.get(channel) ?? []), `You said: ${text}`]);
      const post = g.slack.userPost({ channel, channelType: 'im', text });
      outcomes.push(await deliver(g, g.slack.envelope(post.message), to));
    };
    for (const [i, channel] of places.entries()) await send(channel, i % 2, 1);

    const leaving = g.replicas[0]!;
    leaving.kill('SIGTERM');
    // Round 2 races the signal: some events are acked by the stopping replica, some refused.
    for (const channel of places) await send(channel, 0, 2);
    // Round 3 after the drain began: every one refused there (503, or its port closed).
    await waitFor(() => leaving.log.some((l) => l.includes('shutting down: draining')), 10_000, 'the drain to start');
    const before = outcomes.length;
    for (const channel of places) await send(channel, 0, 3);
    expect(
      outcomes.slice(before).map((o) => o[0]!.status),
      leaving.tail(),
    ).toEqual(places.map(() => expect.toSatisfy((s) => s === 503 || s === 'refused')));

    await leaving.exited;
    expect(leaving.exitSignal, leaving.tail(60)).toBeNull();
    expect(leaving.exitCode, leaving.tail(60)).toBe(0);
    await until(
      'every reply final',
      () => places.every((c) => JSON.stringify(repliesIn(g.slack, c)) === JSON.stringify(want.get(c))),
      60_000,
      () => JSON.stringify(places.map((c) => [c, repliesIn(g.slack, c)])),
    );
    // Exactly the answers, in order: no "restarting" notice, nothing twice.
    for (const channel of places) {
      expect(repliesIn(g.slack, channel)).toEqual(want.get(channel));
      expect(repliesIn(g.slack, channel)).not.toContain(MESSAGES.restarting);
    }
    const acked = outcomes.filter((o) => o[0]!.to === 0 && o[0]!.status === 200).length;
    console.info(`SIGTERM under events: ${acked} acked by the stopping replica, ${outcomes.length} in all`);
  }, 120_000);
});
