import { afterEach, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../src/core/user-messages.js';
import type { FakeDiscord } from '../fakes/discord/index.js';
import { pgSkipReason } from '../support/pg.js';
import { closeGroups, group, repliesIn, until } from '../support/replica-group.js';

const skip = await pgSkipReason();
if (skip) console.log(`replica tests skipped: ${skip}`);
afterEach(closeGroups);

// Several real `assistant-bridge start` processes sharing one PostgreSQL, behind no sticky load
// balancer: the fake Slack's events (HTTP mode) are spread round-robin over the replicas, and a
// retry goes to another replica than the first delivery. What a user sees must be what one
// bridge would show: every message answered once, in order per place, in its place's
// conversation; a replica killed mid-reply is repaired by another; SIGTERM loses nothing.

/** MESSAGES.interrupted as Slack shows it (Markdown rendered to mrkdwn). */
const INTERRUPTED = MESSAGES.interrupted.trim().replace(/_/g, '');

describe.skipIf(skip !== undefined)('several replicas on one PostgreSQL', () => {
  it('3 replicas, Slack round-robin with retries elsewhere, Discord on 2 shards: 60 messages in 12 places once, in order', async () => {
    // Replicas 1 and 2 run Discord shard 0 and shard 1 of 2; every replica takes Slack events.
    const discordEnv = (discord: FakeDiscord, shard: number) => ({
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiUrl,
      DISCORD_REPLY_MODE: 'inline',
      DISCORD_SHARD_COUNT: '2',
      DISCORD_SHARD_IDS: String(shard),
    });
    const g = await group(3, {
      perReplica: (discord) => [discordEnv(discord, 0), discordEnv(discord, 1), {}],
      discordGuilds: [
        [0, 2],
        [0, 2],
        [1, 2],
        [1, 2],
      ],
    });
    const slackPlaces = Array.from({ length: 8 }, (_, i) => `D${i + 1}`);
    const discordPlaces = g.guildChannels;
    const rounds = 5;
    let next = 0;
    for (let round = 1; round <= rounds; round++) {
      for (const channel of slackPlaces) {
        const post = g.slack.userPost({ channel, channelType: 'im', text: `${channel} m${round}` });
        const body = g.slack.envelope(post.message);
        const first = next++ % 3;
        expect((await g.slack.postSignedEvent(g.eventsUrl(first), body)).status).toBe(200);
        // Every third message is delivered again, to another replica, as Slack's retry.
        if (round % 3 === 0) {
          const again = await g.slack.postSignedEvent(g.eventsUrl((first + 1) % 3), body, { retryNum: 1 });
          expect(again.status).toBe(200);
        }
      }
      for (const channelId of discordPlaces) {
        const text = `${channelId} m${round}`;
        g.discord.dispatchMessage({
          channelId,
          authorId: '100000000000000001',
          content: `<@${g.discord.botUser.id}> ${text}`,
          mentionsBot: true,
        });
      }
    }
    const want = (place: string) => Array.from({ length: rounds }, (_, i) => `You said: ${place} m${i + 1}`);
    const discordReplies = (channelId: string) => g.discord.botMessages(channelId).map((m) => m.content);
    const shown = (place: string) => (slackPlaces.includes(place) ? repliesIn(g.slack, place) : discordReplies(place));
    const places = [...slackPlaces, ...discordPlaces];
    await until(
      'every reply final',
      () => places.every((p) => JSON.stringify(shown(p)) === JSON.stringify(want(p))),
      90_000,
      () => JSON.stringify(places.map((p) => [p, shown(p)])),
    );
    for (const place of places) {
      // Exactly once, in order, each in its place's one conversation.
      expect(shown(place)).toEqual(want(place));
      const asked = g.emu.requests.filter((r) => (r.message ?? '').startsWith(`${place} m`));
      expect(asked.map((r) => r.message?.split(' ')[1])).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
      const ids = new Set(asked.slice(1).map((r) => r.conversationId));
      expect(ids.size).toBe(1);
      expect([...ids][0]).toBeDefined();
    }
    const lastIds = places.map(
      (p) => g.emu.requests.filter((r) => (r.message ?? '').startsWith(`${p} m`)).at(-1)?.conversationId,
    );
    expect(new Set(lastIds).size).toBe(places.length);
    // The fakes' limits, counted over all replicas together.
    expect(g.slack.rateLimitHitsByBucket).toEqual({});
    expect(g.discord.rateLimitHits).toBe(0);
  }, 150_000);

  it('kill -9 mid-reply: a survivor marks it interrupted within the lease + 5 s; the place goes on', async () => {
    const g = await group(2, { env: { REPLICA_LEASE_SECONDS: '2' } });
    const post = g.slack.userPost({
      channel: 'D9',
      channelType: 'im',
      text: 'slow [long 4000] [chunks 200] [delay 30]',
    });
    await g.slack.postSignedEvent(g.eventsUrl(0), g.slack.envelope(post.message));
    // Well into the reply (an edit after the first post, so its progress is recorded), as a crash
    // mid-reply would find it; a crash between a post and its record is told as "before any text".
    await until(
      'an edit',
      () => (g.slack.agent.replies('D9')[0]?.text ?? '').length > 60,
      20_000,
      () => '',
    );
    const killedAt = Date.now();
    g.replicas[0]!.kill('SIGKILL');
    await until(
      'the interruption note',
      () => (g.slack.agent.replies('D9').at(-1)?.text ?? '').includes(INTERRUPTED),
      2_000 + 5_000 + 2_000,
      () => JSON.stringify(g.slack.agent.replies('D9').map((m) => m.text.slice(-60))),
    );
    // Contract bound: a replica whose heartbeat is older than the lease (2 s here) is taken over;
    // 5 s on top for the takeover loop and a shared machine.
    expect(Date.now() - killedAt).toBeLessThanOrEqual(2_000 + 5_000);
    expect(g.slack.agent.replies('D9')).toHaveLength(1); // the reply itself was edited, nothing posted
    const follow = g.slack.userPost({ channel: 'D9', channelType: 'im', text: 'still there?' });
    await g.slack.postSignedEvent(g.eventsUrl(1), g.slack.envelope(follow.message));
    await until(
      'the next answer',
      () => g.slack.agent.replies('D9').some((m) => m.text === 'You said: still there?'),
      15_000,
      () => JSON.stringify(g.slack.agent.replies('D9').map((m) => m.text.slice(-60))),
    );
  }, 90_000);

  it('SIGTERM of one replica under load: nothing lost, nothing doubled', async () => {
    const g = await group(2);
    const places = Array.from({ length: 6 }, (_, i) => `D${20 + i}`);
    const sent = new Map<string, string[]>();
    let n = 0;
    const send = async (channel: string, to: number) => {
      const text = `${channel} m${(sent.get(channel)?.length ?? 0) + 1} [chunks 10] [delay 40]`;
      sent.set(channel, [...(sent.get(channel) ?? []), `You said: ${text}`]);
      const post = g.slack.userPost({ channel, channelType: 'im', text });
      expect((await g.slack.postSignedEvent(g.eventsUrl(to), g.slack.envelope(post.message))).status).toBe(200);
    };
    for (const channel of places) await send(channel, n++ % 2);
    // A rolling deploy: replica 1 is told to stop while its replies stream; the load balancer
    // sends the rest to replica 2.
    g.replicas[0]!.kill('SIGTERM');
    for (const channel of places) await send(channel, 1);
    await g.replicas[0]!.exited;
    expect(g.replicas[0]!.exitSignal, g.replicas[0]!.tail()).toBeNull();
    expect(g.replicas[0]!.exitCode, g.replicas[0]!.tail()).toBe(0);
    await until(
      'every reply final',
      () => places.every((c) => JSON.stringify(repliesIn(g.slack, c)) === JSON.stringify(sent.get(c))),
      60_000,
      () => JSON.stringify(places.map((c) => [c, repliesIn(g.slack, c)])),
    );
  }, 120_000);
});
