import { expect, it } from 'vitest';
import { ANN, BOB, stackPerTest } from './discord/stack.js';

// Incoming messages are ordered per place, not globally: a place whose intake waits on Discord
// (here the lookup of an archived thread) delays only itself, never another server.

const start = stackPerTest();

it('a held thread lookup in one server does not delay another; the held place keeps arrival order', async () => {
  const s = await start();
  const { fake, channelId } = s;
  // A thread of the bot's, archived while the bridge was down: after the restart it is absent
  // from GUILD_CREATE, so its first message makes the connector ask Discord about the thread.
  const oldThread = fake.addThread(channelId, fake.botUser.id, 'old conversation');
  fake.archiveThread(oldThread);
  const otherGuild = fake.addGuild('other server');
  const otherChannel = fake.addChannel(otherGuild, 'general');
  await s.restart();

  const hold = fake.holdRoute('GET', `/channels/${oldThread}`);
  fake.dispatchMessage({ channelId: oldThread, authorId: ANN, content: 'first' });
  fake.dispatchMessage({ channelId: oldThread, authorId: ANN, content: 'second' });
  await hold.reached;

  const other = s.ask('meanwhile', { channelId: otherChannel, authorId: BOB });
  // Under a global order this waits for the release that never comes before it: a timeout.
  await fake.waitUntil(
    () => fake.botMessages(other.threadId).find((m) => m.content === 'You said: meanwhile'),
    8000,
    "the other server's reply while the thread lookup is held",
  );
  expect(fake.botMessages(oldThread)).toEqual([]);
  expect(s.emu.requests.map((r) => r.message)).toEqual(['meanwhile']);

  hold.release();
  const done = ['You said: first', 'You said: second'];
  const shown = await fake.waitUntil(() => {
    const texts = fake.botMessages(oldThread).map((m) => m.content);
    return done.every((t) => texts.includes(t)) ? texts : undefined;
  });
  expect(shown).toEqual(['You said: first', 'You said: second']);
  expect(s.emu.requests.map((r) => r.message)).toEqual(['meanwhile', 'first', 'second']);
});
