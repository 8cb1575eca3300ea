import { afterEach, beforeEach, expect, it } from 'vitest';
import { connectorFor, EchoHandler, type HttpConnector, startHttpConnector } from './slack-helpers.js';

// "Every signed request answered": Slack retries an event it has no answer for within 3 s. A
// signed event_callback that no listener takes, or that has no event at all, must still be
// answered in time (200, or 400 when it is malformed); the ordered ack never waits for an ack
// that Bolt will not ask for. Through the real HTTP listener and Bolt.

let w: HttpConnector;
beforeEach(async () => {
  w = await startHttpConnector();
});
afterEach(() => w.close());

/** A signed POST that must be answered before Slack's 3 s retry: a later answer is a failure here. */
async function post(body: Record<string, unknown>): Promise<number> {
  const answered = w.fake.postSignedEvent(w.eventsUrl, body);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('no answer within 3 s')), 3000);
  });
  try {
    return (await Promise.race([answered, late])).status;
  } finally {
    clearTimeout(timer);
  }
}

it('an event_callback without an event, or with an event that is no event, is 400', async () => {
  const envelope = w.fake.envelope({});
  const { event: _none, ...noEvent } = envelope;
  expect(await post(noEvent)).toBe(400);
  expect(await post({ ...envelope, event: 'message' })).toBe(400);
  expect(await post({ ...envelope, event: null })).toBe(400);
  expect(await post({ ...envelope, event: { text: 'no type' } })).toBe(400);
  expect(w.relay.received).toHaveLength(0);
});

it('events no listener takes are 200 at once, and a message afterwards is still answered', async () => {
  const reaction = {
    type: 'reaction_added',
    user: 'U0USER',
    reaction: 'tada',
    item: { type: 'message', channel: 'C1', ts: '1.0' },
    event_ts: '2.0',
  };
  expect(await post(w.fake.envelope(reaction))).toBe(200);
  // Bolt leaves the ack of function_executed to a listener: there is none here.
  const fn = {
    type: 'function_executed',
    function: { callback_id: 'nothing' },
    inputs: {},
    function_execution_id: 'Fx1',
    event_ts: '3.0',
  };
  expect(await post(w.fake.envelope(fn))).toBe(200);
  expect(await post(w.fake.envelope({ type: 'no_such_event_type', event_ts: '4.0' }))).toBe(200);

  const msg = w.fake.userPost({ channel: 'C1', text: '<@U0BOT> still here' });
  expect(await post(w.fake.envelope(msg.mention ?? {}))).toBe(200);
  await w.relay.answered(1);
  expect(w.relay.received.map((m) => m.text)).toEqual(['still here']);
});

it('over Socket Mode too: an event no listener acks is acked before Slack gives up on it', async () => {
  // Only Slack writes on the socket (it is opened with the app token); an envelope without an
  // event makes @slack/socket-mode itself throw before Bolt sees it, so only real events here.
  const socketConn = connectorFor(w.fake);
  const socketRelay = new EchoHandler();
  await socketConn.start(socketRelay);
  try {
    await w.fake.waitConnected();
    const fn = { type: 'function_executed', function: { callback_id: 'x' }, inputs: {}, event_ts: '3.0' };
    const reaction = {
      type: 'reaction_added',
      user: 'U0USER',
      reaction: 'tada',
      item: { type: 'message', channel: 'C1', ts: '1.0' },
      event_ts: '2.0',
    };
    for (const body of [w.fake.envelope(fn), w.fake.envelope(reaction)]) {
      // The w.fake rejects when no ack comes within 3 s.
      await w.fake.deliverEvent(body, { ackTimeoutMs: 3000 });
    }
    expect(w.fake.socketDeliveries.map((d) => d.acked)).toEqual([true, true]);
    expect(socketRelay.received).toHaveLength(0);
  } finally {
    await socketConn.shutdown();
  }
});
