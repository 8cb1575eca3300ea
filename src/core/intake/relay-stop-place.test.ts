import { expect, it } from 'vitest';
import { relayWorld } from '../../../test/fakes/relay-world.js';
import type { Place } from '../ports.js';
import { MESSAGES } from '../user-messages.js';

// A Stop that names the place (Slack's agent-session Stop): the reply being written there, by the
// same rules as a Stop on the reply's key.

it('stopPlace stops the reply in the place for its asker only; elsewhere and afterwards nothing', async () => {
  const { clock, chat, conn, relay } = relayWorld();
  let open: () => void = () => {};
  const gated = new Promise<void>((r) => (open = r));
  chat.script = () => ({ chunks: ['Started', ' never'], gate: gated });
  const place: Place = { platform: 'test', channelId: 'C1' };

  expect(await relay.stopPlace(place, 'U1')).toBe('not_found');
  const reply = conn.send({ text: 'slow', userId: 'U1' });
  let done = false;
  void reply.finally(() => (done = true));
  await clock.advanceUntil(() => conn.writes.length > 0, 60_000, 100);
  expect(await relay.stopPlace({ ...place, channelId: 'C2' }, 'U1')).toBe('not_found');
  expect(await relay.stopPlace(place, 'U2')).toBe('not_owner');
  expect(await relay.stopPlace(place, 'U1')).toBe('stopped');
  await clock.advanceUntil(() => done, 60_000, 100);
  expect(await reply).toEqual({ status: 'answered' });
  expect(conn.contentsIn('C1')).toEqual([`Started${MESSAGES.stopped}`]);
  expect(chat.cancelled).toBe(1);
  expect(await relay.stopPlace(place, 'U1')).toBe('not_found');
  open();
});
