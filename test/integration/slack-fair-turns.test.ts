import { afterEach, describe, expect, it } from 'vitest';
import type { FakeSlack } from '../fakes/slack/index.js';
import { type SlackStack, startSlackStack } from './slack-stack.js';

// Fair turns (issue 19), through the real Bolt connector, relay, upstream client and emulator
// against the fake Slack: one user floods a channel with 60 mentions (each opens a thread of its
// own, so 60 places competing for the channel's posts and the upstream slots), then another user
// mentions the bot once. The other user's reply must not wait behind the flood: its first post
// comes within a couple of the channel's posts (counted in the fake, not timed). Refusals of the
// flood (over USER_MESSAGES_PER_MINUTE) are ephemeral: no channel post, no thread.

const FLOOD = 60;
const CHANNEL = 'C0FLOOD';
/** The channel’s posts: 4 a second (the bridge told the same), so the flood takes 15 s, not 60. */
const POSTS = { limit: 4, windowMs: 1000 };
/**
 * Every reply's text comes at once, so all the flood's posts wait for the channel's budget
 * together (in flight: upstream done, posts owed), and the other user's post is wanted right
 * after its mention.
 */
const DIRECTIVES = '[long 300]';

let s: SlackStack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

async function flood(userMessagesPerMinute: number) {
  s = await startSlackStack({
    streaming: 'edit',
    editIntervalMs: 1000,
    fake: { rateModel: 'fixed-window', rateNumbers: { post: { ...POSTS, burst: POSTS.limit } } },
    limits: { post: POSTS },
    relay: { userMessagesPerMinute, maxConcurrentReplies: 64 },
    timeUpstream: true,
  });
  const { fake } = s;
  const posts = Array.from({ length: FLOOD }, (_, i) =>
    fake.userPost({ channel: CHANNEL, user: 'U0FLOOD', text: `<@U0BOT> question tag-f${i} ${DIRECTIVES}` }),
  );
  await Promise.all(posts.map((p) => fake.sendEvent(p.mention ?? {})));
  // The flood is in flight: every accepted message's upstream reply is done, its posts owed.
  await s.upstream?.waitEnded(Math.min(FLOOD, userMessagesPerMinute), 30_000);
  const askedAt = channelPosts(fake).length;
  const other = fake.userPost({
    channel: CHANNEL,
    user: 'U0OTHER',
    text: `<@U0BOT> my turn please tag-other ${DIRECTIVES}`,
  });
  await fake.sendEvent(other.mention ?? {});
  await s.settled(FLOOD + 1);
  return { fake, other, askedAt, posts };
}

/** The channel's accepted posts (in any of its threads or at top level), in order. */
function channelPosts(fake: FakeSlack) {
  return fake.writeLog.filter((w) => w.accepted && w.method === 'chat.postMessage' && w.channel === CHANNEL);
}

describe('Slack: fair turns in a flooded channel', () => {
  it('with 60 replies of one user in flight, another user’s first post comes within a couple of the channel’s posts', async () => {
    const { fake, other, askedAt } = await flood(1000);
    const all = channelPosts(fake);
    const firstOther = all.findIndex((w) => w.threadTs === other.ts);
    expect(firstOther).toBeGreaterThanOrEqual(0);
    // Posts of the flood that went between the other user's mention and its first post.
    const between = firstOther - askedAt;
    if (process.env.E2E_FIGURES) console.log({ between, total: all.length, firstOther, askedAt });
    expect(between).toBeLessThanOrEqual(3);
    // And the flood was still waiting then: without fair turns it would have gone first.
    expect(all.length - firstOther).toBeGreaterThan(20);
    // Every reply was answered in its own thread.
    expect(s?.results.filter((r) => r.status === 'answered')).toHaveLength(FLOOD + 1);
    expect(fake.rateLimitHits).toBe(0);
  }, 60_000);

  it('tells the flood’s refusals privately: ephemeral, no channel post, no thread, and the other user still comes soon', async () => {
    const { fake, other, askedAt, posts } = await flood(20);
    const results = s?.results ?? [];
    expect(results.filter((r) => r.status === 'user_rate_limited')).toHaveLength(FLOOD - 20);
    expect(results.filter((r) => r.status === 'answered')).toHaveLength(21);
    // Each refusal is an ephemeral for the flooder, in the channel (not in a thread it opens); they
    // trickle out at the ephemeral budget's pace, after the answers' writes.
    const refusals = fake.ephemerals.filter((e) => e.user === 'U0FLOOD');
    expect(refusals).toHaveLength(FLOOD - 20);
    expect(refusals.every((e) => e.channel === CHANNEL && e.threadTs === undefined)).toBe(true);
    // Public notices: none. Every bot message in the channel is in the thread of an answered mention.
    const bot = fake.writeLog.filter((w) => w.accepted && w.method === 'chat.postMessage');
    const answeredThreads = new Set([other.ts, ...posts.map((p) => p.ts)]);
    expect(bot.every((w) => w.threadTs !== undefined && answeredThreads.has(w.threadTs))).toBe(true);
    const threadsWithBot = new Set(bot.map((w) => w.threadTs));
    expect(threadsWithBot.size).toBe(21);
    const all = channelPosts(fake);
    expect(all.findIndex((w) => w.threadTs === other.ts) - askedAt).toBeLessThanOrEqual(3);
  }, 60_000);
});
