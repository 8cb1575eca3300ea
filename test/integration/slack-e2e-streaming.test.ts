import { afterEach, expect, it } from 'vitest';
import { markdownTextOracle, mrkdwnOracle } from './slack-parts.js';
import { longMarkdown } from '../../src/emulator/replies.js';
import { type SlackStack, startSlackStack } from './slack-stack.js';
import { slackPingProblems, slackWrites } from '../fakes/slack/mention-check.js';

// End to end: native streams, their fallback, mention safety and many replies at once under
// the fake's rate limits.

let s: SlackStack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const methods = (stack: SlackStack) => stack.fake.calls.map((c) => c.method);

it('streams natively in an assistant DM thread', async () => {
  s = await startSlackStack({ streaming: 'auto', chunkDelayMs: 10 });
  const { fake } = s;
  const root = fake.userPost({ channel: 'D1', text: 'thread root' });
  const q = 'tell me something about native streaming in slack please';
  await fake.sendEvent(fake.userPost({ channel: 'D1', text: q, threadTs: root.ts }).message);
  await s.settled(1);
  const [reply, ...more] = fake.botMessages('D1', root.ts);
  expect(more).toHaveLength(0);
  expect(reply?.text).toBe(`You said: ${q}`);
  expect(reply?.streaming).toBe(false);
  expect(methods(s)).toEqual(expect.arrayContaining(['chat.startStream', 'chat.appendStream', 'chat.stopStream']));
  expect(methods(s)).toContain('assistant.threads.setStatus');
  expect(s.chatRequests()[0]?.metadata).toMatchObject({ channelId: 'D1', threadId: root.ts });
});

it('falls back to edits when the fake rejects chat.startStream, text exact', async () => {
  s = await startSlackStack({ streaming: 'auto', chunkDelayMs: 10 });
  const { fake } = s;
  fake.switches.failStartStream = 'channel_type_not_supported';
  const root = fake.userPost({ channel: 'D2', text: 'thread root' });
  await fake.sendEvent(fake.userPost({ channel: 'D2', text: 'give me [long 1500]', threadTs: root.ts }).message);
  await s.settled(1);
  const replies = fake.botMessages('D2', root.ts);
  expect(replies).toHaveLength(1);
  expect(replies[0]?.text).toBe(markdownTextOracle(longMarkdown(1500)));
  expect(methods(s)).toContain('chat.update');
  expect(methods(s)).not.toContain('chat.appendStream');
});

it('upstream text never pings: <!channel>, <!here>, <@U…> are neutralised in every write', async () => {
  s = await startSlackStack({ streaming: 'auto', chunkDelayMs: 5 });
  const { fake } = s;
  const evil =
    'ping <!channel> and <!here> and <@U0ADMIN> and <#C0GEN> and <!subteam^S1|@devs> and @everyone, @Channel, @HERE';
  const post = fake.userPost({ channel: 'C1', text: `<@U0BOT> ${evil}` });
  await fake.sendEvent(post.mention ?? {});
  const root = fake.userPost({ channel: 'D3', text: 'root' });
  await fake.sendEvent(fake.userPost({ channel: 'D3', text: evil, threadTs: root.ts }).message);
  await s.settled(2);
  expect(s.chatRequests().map((r) => r.message)).toEqual([evil, evil]);
  // Written out: entities in mrkdwn, a zero-width space after `<` in markdown_text.
  expect(fake.botMessages('C1', post.ts)[0]?.text).toBe(
    'You said: ping &lt;!channel&gt; and &lt;!here&gt; and &lt;@U0ADMIN&gt; and &lt;#C0GEN&gt; and &lt;!subteam^S1|@devs&gt; and @\u200Beveryone, @\u200BChannel, @\u200BHERE',
  );
  expect(fake.botMessages('D3', root.ts)[0]?.text).toBe(
    'You said: ping <\u200B!channel> and <\u200B!here> and <\u200B@U0ADMIN> and <\u200B#C0GEN> and <\u200B!subteam^S1|@devs> and @\u200Beveryone, @\u200BChannel, @\u200BHERE',
  );
  // The shared check (also run after every test by the stack): every chat.* write, every field.
  expect(slackWrites(fake.calls).length).toBeGreaterThanOrEqual(2);
  expect(slackPingProblems(fake.calls)).toEqual([]);
});

it('20 concurrent replies in one workspace finish exact with zero 429s under the fake tier limits', async () => {
  // Windows shrunk (same shape as Slack's tiers) so the test is quick. The fake counts at its
  // end and everything here shares one event loop, so on a busy machine a request can arrive
  // most of a second after the scheduler let it go: the bridge assumes clearly lower rates than
  // enforced (what it asserts is that the bridge keeps to its budget, not how close it runs).
  s = await startSlackStack({
    chunkDelayMs: 25,
    editIntervalMs: 100,
    limits: { post: { limit: 1, windowMs: 2000 }, update: { limit: 6, windowMs: 1000 } },
    fake: {
      // Out of chaos: this counts 429s exactly at windows shrunk to a second, and a lost answer's
      // repeat (after the writer's back-off) lands in a window the bridge had not planned it for.
      // Replies under lost answers at load are the bench's `--faults` section.
      chaos: false,
      limits: {
        'chat.postMessage': { limit: 1, windowMs: 1000, per: 'channel' },
        'chat.update': { limit: 10, windowMs: 1000, per: 'team' },
      },
    },
  });
  const { fake } = s;
  const posts = [];
  for (let i = 0; i < 20; i += 1) {
    const channel = `C${i % 10}`;
    posts.push({
      channel,
      post: fake.userPost({ channel, text: `<@U0BOT> reply ${i} [long ${300 + i * 10}] [chunks 8]` }),
    });
  }
  await Promise.all(posts.map(({ post }) => fake.sendEvent(post.mention ?? {})));
  await s.settled(20);
  expect(s.results.every((r) => r.status === 'answered')).toBe(true);
  posts.forEach(({ channel, post }, i) => {
    const msgs = fake.botMessages(channel, post.ts);
    expect(msgs).toHaveLength(1);
    expect(msgs[0]?.text).toBe(mrkdwnOracle(longMarkdown(300 + i * 10)));
  });
  // 20 live replies on a 6/s update budget: the replies that streamed hold their finals, and the
  // ones whose final the budget could not pay posted their whole text once at the end (no
  // update at all). Either way, one message per reply.
  expect(fake.calls.filter((c) => c.method === 'chat.postMessage' && c.result === 'ok').length).toBe(20);
  const limited = fake.calls.filter((c) => c.result === 'ratelimited');
  expect(limited.map((c) => `${c.method} ${String(c.args.channel)} ${c.at}`)).toEqual([]);
  expect(fake.rateLimitHits).toBe(0);
});
