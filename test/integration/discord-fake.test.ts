import { Client, Events, GatewayIntentBits, type Message, Partials, type TextChannel } from 'discord.js';
import { once } from 'node:events';
import { afterEach, expect, it } from 'vitest';
import { startFakeDiscord } from '../fakes/discord/index.js';

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

it('discord.js logs into the fake and receives a message', async () => {
  const fake = await startFakeDiscord();
  cleanup.push(() => fake.close());
  const g = fake.addGuild();
  const ch = fake.addChannel(g);
  const client = new Client({
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.MessageContent,
      GatewayIntentBits.DirectMessages,
    ],
    partials: [Partials.Channel, Partials.Message],
    rest: { api: fake.apiUrl },
  });
  cleanup.push(async () => {
    await client.destroy();
  });
  const ready = once(client, Events.ClientReady);
  await client.login(fake.token);
  await ready;
  expect(client.user?.id).toBe(fake.botUser.id);
  await fake.whenConnected();
  const got = once(client, Events.MessageCreate);
  fake.dispatchMessage({ channelId: ch, authorId: '12345', content: `<@${fake.botUser.id}> hi`, mentionsBot: true });
  const [msg] = (await got) as [Message];
  expect(msg.content).toContain('hi');
  expect(msg.mentions.users.has(fake.botUser.id)).toBe(true);
  await (msg.channel as TextChannel).send({ content: 'yo', allowedMentions: { parse: [] } });
  expect(fake.botMessages(ch)[0]?.content).toBe('yo');
  const th = await msg.startThread({ name: 'x' });
  expect(th.id).toBe(msg.id);
  const dm = fake.addDm('777');
  const got2 = once(client, Events.MessageCreate);
  fake.dispatchMessage({ channelId: dm, authorId: '777', content: 'hello dm' });
  const [m2] = (await got2) as [Message];
  expect(m2.channel.isDMBased()).toBe(true);
});
