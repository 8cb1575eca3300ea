import type { Receiver } from '@slack/bolt';
import { expect, it } from 'vitest';
import { ackAfter, OrderedAckApp } from './app.js';

// The real Bolt App, fed by hand the way a receiver feeds it: an Events API ack waits for what
// the listener recorded; a listener that throws still gets its event acked.

const receiver: Receiver = { init: () => {}, start: () => Promise.resolve(), stop: () => Promise.resolve() };

function app() {
  return new OrderedAckApp({
    receiver,
    authorize: () => Promise.resolve({ botToken: 'xoxb-test', botUserId: 'UBOT', teamId: 'T1' }),
    ignoreSelf: false,
  });
}

const message = (text: string) => ({
  type: 'event_callback',
  team_id: 'T1',
  event_id: `Ev-${text}`,
  event: { type: 'message', channel: 'D1', channel_type: 'im', user: 'U1', text, ts: '1.000001' },
});

it('an event is acked only once what its listener recorded has settled', async () => {
  const a = app();
  let record = () => {};
  a.message(() => {
    ackAfter(new Promise<void>((r) => (record = r)));
    return Promise.resolve();
  });
  const log: string[] = [];
  const done = a.processEvent({
    body: message('hi'),
    ack: () => {
      log.push('ack');
      return Promise.resolve();
    },
  });
  await new Promise((r) => setImmediate(r));
  expect(log).toEqual([]);
  log.push('recorded');
  record();
  await done;
  expect(log).toEqual(['recorded', 'ack']);
});

it('a listener that throws still has its event acked; one that records nothing is acked at once', async () => {
  const a = app();
  a.message(({ message: m }) => {
    if ('text' in m && m.text === 'boom') throw new Error('listener failed');
    return Promise.resolve();
  });
  a.error(() => Promise.resolve());
  let acks = 0;
  const ack = () => {
    acks++;
    return Promise.resolve();
  };
  await a.processEvent({ body: message('boom'), ack }).catch(() => undefined);
  await a.processEvent({ body: message('fine'), ack });
  expect(acks).toBe(2);
});
