import { describe, expect, it } from 'vitest';
import { relayWorld } from '../../../test/fakes/relay-world.js';
import type { HandleResult } from '../ports.js';
import { MESSAGES } from '../user-messages.js';

// SIGTERM and the messages already on their way: a message whose event arrived (and may have
// been acked) before the drain began is answered, and the drain waits for it; one that arrives
// after the drain began is refused as before.

const status = (s: HandleResult['status']) => ({ status: s });

describe('relay drain and arrivals', () => {
  it('a message that arrived before the drain but reaches handle() during it is answered; the drain waits for it', async () => {
    const { conn, relay, clock } = relayWorld();
    const place = { platform: 'test' as const, channelId: 'C1' };
    // The connector joins the line on arrival (and acks), then still waits (a user name, files).
    const arrival = relay.arrive(place, 'ev-early', clock.now());
    let drained = false;
    const drain = relay.drain(5_000).then(() => (drained = true));
    await clock.advance(1_000);
    expect(drained).toBe(false); // waiting for the acked message to reach handle()
    const msg = conn.message({ text: 'acked before the drain', eventId: 'ev-early', place });
    msg.arrival = arrival;
    const handled = relay.handle(msg);
    await clock.advanceUntil(() => drained, 10_000, 100);
    expect(await handled).toEqual(status('answered'));
    expect(conn.contentsIn('C1')).toEqual(['You said: acked before the drain']);
    await drain;
  });

  it('an arrival after the drain began is refused; one dropped on its way is not waited for', async () => {
    const { conn, relay, clock } = relayWorld();
    const dropped = relay.arrive({ platform: 'test', channelId: 'C3' }, 'ev-dropped', clock.now());
    const drain = relay.drain(5_000);
    dropped.leave(); // e.g. a thread message in a thread the bot is not in
    const place = { platform: 'test' as const, channelId: 'C2' };
    const late = relay.arrive(place, 'ev-late', clock.now());
    const msg = conn.message({ text: 'too late', eventId: 'ev-late', place });
    msg.arrival = late;
    let result: HandleResult | undefined;
    void relay.handle(msg).then((r) => (result = r));
    await clock.advanceUntil(() => result !== undefined, 1_000, 10);
    expect(result).toEqual(status('interrupted'));
    expect(conn.contentsIn('C2')).toEqual([MESSAGES.restarting]);
    let drained = false;
    void drain.then(() => (drained = true));
    // Nothing left to wait for: the drain ends without its timeout.
    await clock.advanceUntil(() => drained, 100, 10);
    expect(drained).toBe(true);
  });
});
