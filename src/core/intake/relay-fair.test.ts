import { expect, it } from 'vitest';
import { relayWorld } from '../../../test/fakes/relay-world.js';
import { testRelaySettings } from '../../../test/fakes/relay-settings.js';
import { MESSAGES } from '../user-messages.js';

// Fair waits through the relay (issue 19): one user's messages in many places wait for the
// upstream slots in turn with another user's, and one user cannot fill the whole queue. The
// clock is moved by hand; upstream replies wait at a gate.

it('another user’s message takes the next free slot, and one user fills three quarters of the queue at most', async () => {
  const { clock, chat, conn } = relayWorld({
    settings: testRelaySettings({ maxConcurrentReplies: 1, maxQueuedReplies: 4, userMessagesPerMinute: 100 }),
  });
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  chat.script = (req) => ({ chunks: [req.message, '.'], ...(req.message === 'f0' ? { gate } : {}) });
  const flood: Promise<unknown>[] = [];
  for (let i = 0; i < 5; i++) {
    flood.push(conn.send({ text: `f${i}`, channelId: `F${i}`, userId: 'U-FLOOD' }));
    await clock.settle(); // in line for a slot before the next comes
  }
  await clock.advance(100);
  // f0 has the slot, f1..f3 wait (three quarters of 4), f4 is told the assistant is busy.
  expect(conn.contentsIn('F4')).toEqual([MESSAGES.overloaded]);
  const other = conn.send({ text: 'mine', channelId: 'O', userId: 'U-OTHER' });
  await clock.advance(100);
  expect(conn.contentsIn('O')).toEqual([]); // queued, not refused
  open();
  let done = false;
  void Promise.all([...flood, other]).then(() => (done = true));
  await clock.advanceUntil(() => done, 60_000, 100);
  // The other user's call comes right after the next of the flood's, not after all of them.
  expect(chat.requests.map((r) => r.message)).toEqual(['f0', 'f1', 'mine', 'f2', 'f3']);
  expect(conn.contentsIn('O')).toEqual(['mine.']);
});
