import { Routes } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createDiscordClient } from '../../src/connectors/discord/client.js';
import { toPlatformError } from '../../src/connectors/discord/errors.js';
import { DiscordRateLimitFeed } from '../../src/connectors/discord/rate-limits.js';
import { PlatformWriteError } from '../../src/core/ports.js';
import { silentLogger } from '../../src/logger.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import type { LostAnswer } from '../fakes/chaos.js';
import { loseNth } from '../fakes/lost-answers.js';
import { BOB, replyEnded, stackPerTest } from './discord/stack.js';

// A 5xx answer to a reply's message write is retried by the bridge's scheduler, never by
// discord.js itself (whose retry spent the channel's budget unseen and doubled the scheduler's).
// Through the real discord.js against the fake Discord.

const start = stackPerTest();
let fake: FakeDiscord | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const creates = (f: FakeDiscord) => f.record.filter((w) => w.method === 'POST' && /\/messages$/.test(w.path));

describe('discord.js does not retry a message write answered 5xx', () => {
  /** A discord.js client of the bridge's against a fake whose first message create loses its answer `how`. */
  async function clientLosingFirstCreate(how: LostAnswer) {
    fake = await startFakeDiscord({ chaos: loseNth({ create: [1] }, how) });
    const channelId = fake.addChannel(fake.addGuild('g'), 'general');
    const feed = new DiscordRateLimitFeed({ observe() {}, limited() {} }, silentLogger);
    const config = { botToken: fake.token, apiUrl: fake.apiUrl, replyMode: 'thread' as const };
    const client = createDiscordClient({ ...config, allowedGuilds: [], allowedChannels: [] }, feed);
    client.rest.setToken(fake.token);
    const post = () => client.rest.post(Routes.channelMessages(channelId), { body: { content: 'hello' } });
    /** The first write's error as the bridge maps it. */
    const firstWriteError = async () => {
      const err = await post().then(
        () => undefined,
        (e: unknown) => e,
      );
      return toPlatformError(err, `discord:channel:${channelId}`);
    };
    return { fake, client, post, firstWriteError };
  }

  it('the write reaches Discord once and comes back as a retryable write error', async () => {
    const { fake, client, post, firstWriteError } = await clientLosingFirstCreate('5xx');
    try {
      const mapped = await firstWriteError();
      expect(mapped).toBeInstanceOf(PlatformWriteError);
      expect((mapped as PlatformWriteError).retryable).toBe(true);
      expect((mapped as PlatformWriteError).code).toBe('http_503');
      // One attempt: discord.js's own retry (REST `retries: 1`) would have made two.
      expect(creates(fake)).toHaveLength(1);
      // The next write (the scheduler's retry) goes through as usual.
      await post();
      expect(creates(fake)).toHaveLength(2);
    } finally {
      await client.destroy();
    }
  });

  it('a message write whose connection is cut: one attempt, a retryable write error', async () => {
    const { fake, client, firstWriteError } = await clientLosingFirstCreate('cut');
    try {
      const mapped = await firstWriteError();
      expect(mapped).toBeInstanceOf(PlatformWriteError);
      expect((mapped as PlatformWriteError).retryable).toBe(true);
      expect(creates(fake)).toHaveLength(1);
    } finally {
      await client.destroy();
    }
  });

  it('a reply whose first post is answered 5xx: posted exactly twice (once + the scheduler retry), final and exact', async () => {
    const q = 'a question whose first post meets a server error';
    const s = await start({ chunkDelayMs: 10, fake: { chaos: loseNth({ create: [1] }, '5xx') } });
    const f = s.fake;
    const { threadId } = s.ask(q, { authorId: BOB });
    await f.waitUntil(
      () => f.botMessages(threadId).find((m) => m.content === `You said: ${q}` && replyEnded(m)),
      20_000,
      'the final reply',
    );
    expect(f.botMessages(threadId).map((m) => m.content)).toEqual([`You said: ${q}`]);
    expect(creates(f).filter((w) => w.channelId === threadId)).toHaveLength(2);
  });
});
