import { REST, Routes } from 'discord.js';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../../../test/fakes/discord/index.js';
import { sweepIdleHandlers } from './rest-sweep.js';

// discord.js's REST queues (one per route and channel or thread) against the fake Discord: the
// idle ones are dropped even when the sweep falls inside a second at the global limit (issue 31).

let fake: FakeDiscord;
let rest: REST;
beforeEach(async () => {
  fake = await startFakeDiscord();
  // Its own sweep off: only the sweep under test drops handlers.
  rest = new REST({ api: fake.apiUrl, handlerSweepInterval: 0, hashSweepInterval: 0 }).setToken(fake.token);
});
afterEach(() => fake.close());

it('drops idle handlers once the global second is over, not inside it', async () => {
  const guild = fake.addGuild('g');
  for (let i = 0; i < 3; i++) {
    const channel = fake.addChannel(guild, `c${i}`);
    await rest.post(Routes.channelMessages(channel), { body: { content: 'hello' } });
  }
  const held = rest.handlers.size;
  expect(held).toBeGreaterThanOrEqual(3);
  // The client used its 50 requests of this second: discord.js calls every handler limited.
  const now = 1_000_000;
  rest.globalRemaining = 0;
  rest.globalReset = Date.now() + 600;
  expect(rest.handlers.every((h) => !h.inactive)).toBe(true);
  const inside = sweepIdleHandlers(rest, rest.globalReset - 600);
  expect(inside).toEqual({ swept: 0, retryInMs: 601 });
  expect(rest.handlers.size).toBe(held);
  // The second is over (the clock passed globalReset): every idle handler goes.
  rest.globalReset = now;
  expect(sweepIdleHandlers(rest, now + 1)).toEqual({ swept: held });
  expect(rest.handlers.size).toBe(0);
  // A channel written again gets a new handler, and writes as before.
  await rest.post(Routes.channelMessages(fake.addChannel(guild, 'again')), { body: { content: 'again' } });
  expect(rest.handlers.size).toBeGreaterThanOrEqual(1);
});
