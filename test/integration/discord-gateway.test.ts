import { afterEach, expect, it } from 'vitest';
import { createDiscordConnector } from '../../src/connectors/discord/index.js';
import { silentLogger } from '../../src/logger.js';
import { connectTo, EchoHandler, type Harness, mention, startHarness } from './discord/harness.js';

// Gateway trouble: a dropped connection resumes and replays what was missed; a refused resume
// re-identifies; a replayed MESSAGE_CREATE is not answered twice.

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const USER = '100000000000000001';

it('resumes after a disconnect and answers a message sent while it was away, once', async () => {
  const handler = new EchoHandler();
  h = await startHarness(handler);
  const { fake, channelId } = h;
  const closed = fake.gateway.waitFor('closed');
  const resumed = fake.gateway.waitFor('resumed');
  fake.disconnectGateway(4000);
  await closed;
  const missed = fake.dispatchMessage({
    channelId,
    authorId: USER,
    content: mention(fake, 'while away'),
    mentionsBot: true,
  });
  await resumed;
  const threadId = String(missed.id);
  await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: while away'));
  expect(fake.gateway.stats).toMatchObject({ identifies: 1, resumes: 1 });
  expect(h.connector.isReady()).toBe(true);

  // The same event delivered again (a replay) gets no second reply.
  fake.redispatch('MESSAGE_CREATE', missed);
  fake.dispatchMessage({ channelId: threadId, authorId: USER, content: 'next' });
  await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: next'));
  expect(fake.botMessages(threadId).filter((m) => m.content === 'You said: while away')).toHaveLength(1);
});

it('identifies again when the resume is refused, and keeps working', async () => {
  const handler = new EchoHandler();
  h = await startHarness(handler);
  const { fake, channelId } = h;
  fake.gateway.rejectNextResume = true;
  const identified = fake.gateway.waitFor('identified');
  fake.disconnectGateway(4000);
  await identified;
  expect(fake.gateway.stats.invalidSessions).toBe(1);
  // discord.js holds events until the guilds arrive again, so sending right away is fine.
  const user = fake.dispatchMessage({
    channelId,
    authorId: USER,
    content: mention(fake, 'after reidentify'),
    mentionsBot: true,
  });
  await fake.waitUntil(() => fake.botMessages(String(user.id)).find((m) => m.content === 'You said: after reidentify'));
  expect(h.connector.isReady()).toBe(true);
});

it('is not ready once stopped', async () => {
  h = await startHarness(new EchoHandler());
  expect(h.connector.isReady()).toBe(true);
  expect(h.connector.inviteUrl()).toContain(`client_id=${h.fake.applicationId}`);
  await h.connector.shutdown();
  expect(h.connector.isReady()).toBe(false);
});

it('after a restart still answers, without a mention, in its own thread that was archived meanwhile', async () => {
  const first = new EchoHandler();
  h = await startHarness(first);
  const { fake, channelId } = h;
  const user = fake.dispatchMessage({ channelId, authorId: USER, content: mention(fake, 'start'), mentionsBot: true });
  const threadId = String(user.id);
  await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: start'));
  await h.connector.shutdown();
  fake.archiveThread(threadId);

  const second = new EchoHandler();
  const restarted = await connectTo(fake, second);
  h.connector = restarted;
  fake.dispatchMessage({ channelId: threadId, authorId: USER, content: 'still there?' });
  await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: still there?'));
  expect(second.seen[0]?.place).toEqual({ platform: 'discord', workspaceId: h.guildId, channelId, threadId });
});

it('a wrong token fails start() with a clear error that does not contain the token', async () => {
  h = await startHarness(new EchoHandler());
  const wrong = 'MTIzNDU2Nzg5MDEyMzQ1Njc4.GAbCdE.abcdefghijklmnopqrstuvwxyz0123456789AB';
  const connector = createDiscordConnector({
    config: { botToken: wrong, apiUrl: h.fake.apiUrl, replyMode: 'thread', allowedGuilds: [], allowedChannels: [] },
    logger: silentLogger,
  });
  const err = await connector.start(new EchoHandler()).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(Error);
  expect((err as Error).message).toMatch(/discord: could not connect/);
  expect((err as Error).message).not.toContain(wrong);
  expect(connector.isReady()).toBe(false);
});
