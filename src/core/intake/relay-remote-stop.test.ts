import { expect, it } from 'vitest';
import { relayWorld } from '../../../test/fakes/relay-world.js';
import type { StopResult } from '../ports.js';
import type { RemoteStops } from './relay.js';
import { MESSAGES } from '../user-messages.js';

// Several replicas: a Stop for a reply this replica does not write goes to the RemoteStops port,
// and one another replica passes here stops the local reply.

function setup(remoteAnswer: StopResult) {
  const asked: Array<{ by: unknown; userId: string }> = [];
  const started: string[] = [];
  let passHere: (replyKey: string, userId: string) => void = () => {};
  const remote: RemoteStops = {
    started: (placeKey, replyKey, asker) => started.push(`${placeKey} ${asker} ${replyKey.length}`),
    stop: (by, userId) => {
      asked.push({ by, userId });
      return Promise.resolve(remoteAnswer);
    },
    onStop: (h) => (passHere = h),
  };
  const { clock, chat, conn, relay } = relayWorld({ remoteStops: remote });
  return { clock, chat, conn, relay, asked, started, passHere: (k: string, u: string) => passHere(k, u) };
}

it('`stop` with no reply here asks the other replicas; stopped there, it is not answered here', async () => {
  const w = setup('stopped');
  expect(await w.conn.send({ text: 'stop', userId: 'U1' })).toEqual({ status: 'stopped' });
  expect(w.asked).toEqual([{ by: { placeKey: 'test:-:C1:-' }, userId: 'U1' }]);
  expect(w.conn.contentsIn('C1')).toEqual([]);
  expect(await w.relay.stop('some-key', 'U1')).toBe('stopped'); // a click: asked by key
  expect(w.asked.at(-1)).toEqual({ by: { replyKey: 'some-key' }, userId: 'U1' });
});

it('`stop` that no replica can apply is an ordinary message', async () => {
  const w = setup('not_owner');
  const reply = w.conn.send({ text: 'stop', userId: 'U2' });
  await w.clock.advanceUntil(() => w.conn.contentsIn('C1').length > 0, 60_000, 100);
  expect(await reply).toEqual({ status: 'answered' });
  expect(w.chat.requests.map((r) => r.message)).toEqual(['stop']);
});

it('a stop passed by another replica stops the reply written here, for its asker only', async () => {
  const w = setup('not_found');
  let open: () => void = () => {};
  const gated = new Promise<void>((r) => (open = r));
  w.chat.script = () => ({ chunks: ['Started', ' never'], gate: gated });
  const reply = w.conn.send({ text: 'slow', userId: 'U1' });
  await w.clock.advanceUntil(() => w.conn.writes.length > 0, 60_000, 100);
  expect(w.started).toEqual(['test:-:C1:- U1 36']);
  const key = w.conn.writes.at(-1)?.replyKey as string;
  w.passHere(key, 'U2'); // not the asker: nothing
  w.passHere(key, 'U1');
  let done = false;
  void reply.finally(() => (done = true));
  await w.clock.advanceUntil(() => done, 60_000, 100);
  expect(w.conn.contentsIn('C1')).toEqual([`Started${MESSAGES.stopped}`]);
  open();
});
