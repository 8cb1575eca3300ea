import { afterEach, describe, expect, it } from 'vitest';
import type { ContextMessage } from '../../src/core/chat-port.js';
import type { RelaySettings } from '../../src/core/intake/relay.js';
import { TRANSCRIPT_END, TRANSCRIPT_START, transcriptLine } from '../../src/core/reply/upstream-message.js';
import { MESSAGES } from '../../src/core/user-messages.js';
import { mention } from './discord/harness.js';
import { type Stack, startStack } from './discord/stack.js';
import { type SlackStack, startSlackStack } from './slack-stack.js';

// Thread context end to end: real Bolt and discord.js against the fakes, the emulator upstream.
// A new conversation in a place that already holds messages gets them, in order, in
// metadata.context and (CONTEXT_MODE=message) as a transcript before the user's words.

const context = (mode: 'message' | 'metadata' = 'message'): Partial<RelaySettings> => ({
  context: { mode, maxMessages: 30, maxChars: 6000 },
});

type Entry = Pick<ContextMessage, 'author' | 'role' | 'text'>;

function transcript(entries: Entry[], userText: string): string {
  const lines = entries.map((e) => transcriptLine({ ...e, ts: '' }));
  return [TRANSCRIPT_START, ...lines, TRANSCRIPT_END, '', userText].join('\n');
}

const withoutTs = (ctx: unknown) =>
  (ctx as ContextMessage[] | undefined)?.map(({ author, role, text }) => ({ author, role, text }));

describe('Slack', () => {
  let s: SlackStack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  /** A channel thread of 12 messages (and a bridge notice) the bot was never mentioned in. */
  function seedThread(stack: SlackStack): { parent: string; expected: Entry[] } {
    const { fake } = stack;
    fake.setUserName('U0ANN', 'Ann');
    fake.setUserName('U0BOB', 'Bob');
    fake.setUserName(fake.botUserId, 'bridge');
    const parent = fake.seedMessage('C1', { user: 'U0ANN', text: 'release plan for friday' });
    const own = { user: fake.botUserId, botId: fake.botId };
    const thread: [Record<string, string>, string, Entry | undefined][] = [
      [{ user: 'U0BOB' }, 'which services?', { author: 'Bob', role: 'user', text: 'which services?' }],
      [{ user: 'U0ANN' }, 'api and web', { author: 'Ann', role: 'user', text: 'api and web' }],
      [
        { user: 'U0BOB' },
        '<@U0ANN> web needs a migration',
        { author: 'Bob', role: 'user', text: '@Ann web needs a migration' },
      ],
      [own, 'Migrations run first.', { author: 'bridge', role: 'assistant', text: 'Migrations run first.' }],
      [own, 'The assistant is busy right now, please try again shortly.', undefined],
      [{ user: 'U0ANN' }, 'ok &amp; the api?', { author: 'Ann', role: 'user', text: 'ok & the api?' }],
      [
        { botId: 'B0OTHER', username: 'ci-bot', subtype: 'bot_message' },
        'build 42 green',
        { author: 'ci-bot', role: 'user', text: 'build 42 green' },
      ],
      [{ user: 'U0BOB' }, 'api is ready', { author: 'Bob', role: 'user', text: 'api is ready' }],
      [{ user: 'U0ANN' }, 'who deploys?', { author: 'Ann', role: 'user', text: 'who deploys?' }],
      [{ user: 'U0BOB' }, 'me, at 10', { author: 'Bob', role: 'user', text: 'me, at 10' }],
      [{ user: 'U0ANN' }, 'rollback plan?', { author: 'Ann', role: 'user', text: 'rollback plan?' }],
      [{ user: 'U0BOB' }, 'tag v1 stays', { author: 'Bob', role: 'user', text: 'tag v1 stays' }],
    ];
    const expected: Entry[] = [{ author: 'Ann', role: 'user', text: 'release plan for friday' }];
    for (const [who, text, entry] of thread) {
      fake.seedMessage('C1', { ...who, text, threadTs: parent });
      if (entry) expected.push(entry);
    }
    expect(expected).toHaveLength(12);
    return { parent, expected };
  }

  async function mentionInThread(stack: SlackStack, parent: string, text: string, n: number) {
    const post = stack.fake.userPost({ channel: 'C1', text: `<@U0BOT> ${text}`, threadTs: parent, user: 'U0ANN' });
    await stack.fake.sendEvent(post.message);
    await stack.fake.sendEvent(post.mention ?? {});
    await stack.settled(n);
    return post;
  }

  it.each(['a', 'b'] as const)(
    'Form %s: a mention midway through a thread carries its 12 messages, in order, names not ids',
    async (form) => {
      s = await startSlackStack({ form, relaySettings: context() });
      const { parent, expected } = seedThread(s);
      await mentionInThread(s, parent, 'summarize please', 2);
      const [req, more] = s.chatRequests();
      expect(more).toBeUndefined();
      expect(withoutTs(req?.metadata && (req.metadata as { context?: unknown }).context)).toEqual(expected);
      expect(req?.message).toBe(transcript(expected, 'summarize please'));
      expect(req?.message).not.toMatch(/U0ANN|U0BOB/);
      expect(req?.metadata).toMatchObject({ source: 'slack', channelId: 'C1', threadId: parent, userName: 'Ann' });
      expect(s.fake.calls.filter((c) => c.method === 'conversations.replies' && c.args.latest)).toHaveLength(1);

      // The conversation goes on: no context again.
      const follow = s.fake.userPost({ channel: 'C1', text: 'and then?', threadTs: parent, user: 'U0ANN' });
      await s.fake.sendEvent(follow.message);
      await s.settled(3);
      expect(s.chatRequests()[1]?.message).toBe('and then?');
    },
  );

  it('CONTEXT_MODE=metadata sends the context in metadata only', async () => {
    s = await startSlackStack({ relaySettings: context('metadata') });
    const { parent, expected } = seedThread(s);
    await mentionInThread(s, parent, 'summarize please', 2);
    const [req] = s.chatRequests();
    expect(req?.message).toBe('summarize please');
    expect(withoutTs((req?.metadata as { context?: unknown }).context)).toEqual(expected);
  });

  it('the upstream refuses the message as too long: one retry with the newer half of the context', async () => {
    s = await startSlackStack({ relaySettings: context() });
    const { parent, expected } = seedThread(s);
    const full = transcript(expected, 'summarize please').length;
    s.emu.setOptions({ maxMessageChars: full - 1 });
    await mentionInThread(s, parent, 'summarize please', 2);
    const [refused, retried, more] = s.chatRequests();
    expect(more).toBeUndefined();
    expect(refused?.message).toBe(transcript(expected, 'summarize please'));
    expect(retried?.message).toBe(transcript(expected.slice(6), 'summarize please'));
    expect(withoutTs((retried?.metadata as { context?: unknown }).context)).toEqual(expected.slice(6));
    expect(s.fake.botMessages('C1', parent).at(-1)?.text).toContain('You said:');
  });

  it('a mention that opens its thread reads no history', async () => {
    s = await startSlackStack({ relaySettings: context() });
    s.fake.seedMessage('C1', { user: 'U0BOB', text: 'unrelated chatter' });
    const post = s.fake.userPost({ channel: 'C1', text: '<@U0BOT> hello', user: 'U0ANN' });
    await s.fake.sendEvent(post.message);
    await s.settled(1);
    expect(s.chatRequests()[0]?.message).toBe('hello');
    expect(s.fake.calls.some((c) => c.method === 'conversations.history' || c.args.latest !== undefined)).toBe(false);
  });

  it('renewal after expiry carries the DM history and says so; reset carries none', async () => {
    s = await startSlackStack({ relaySettings: context() });
    const { fake } = s;
    fake.setUserName('U0USER', 'Ann');
    fake.setUserName(fake.botUserId, 'bridge');
    await fake.sendEvent(fake.userPost({ channel: 'D1', text: 'hello' }).message);
    await s.settled(1);
    const first = s.chatRequests()[0];
    expect(first?.message).toBe('hello');
    expect(s.emu.expire(String(first?.conversationId))).toBe(true);

    await fake.sendEvent(fake.userPost({ channel: 'D1', text: 'again' }).message);
    await s.settled(2);
    const renewed = s.chatRequests().at(-1);
    expect(renewed?.conversationId).not.toBe(first?.conversationId);
    // The DM's own messages: the bot's replies sit in the threads under them (Slack's agent
    // experience answers every DM in a thread), where conversations.history does not look; the
    // bridge's record of what it said in the place (context.md) carries them.
    const carried: Entry[] = [
      { author: 'Ann', role: 'user', text: 'hello' },
      { author: 'bridge', role: 'assistant', text: 'You said: hello' },
    ];
    expect(withoutTs((renewed?.metadata as { context?: unknown }).context)).toEqual(carried);
    expect(renewed?.message).toBe(transcript(carried, 'again'));
    const reply = fake.agent.replies('D1').at(-1)?.text ?? '';
    // Written out: Slack needs the italic underscores fenced by zero-width spaces.
    expect(reply).toMatch(
      /^\u200B_\(This is a new conversation; the recent messages here were carried over as context\.\)_\u200B\n\nYou said: /,
    );

    for (const [i, text] of ['reset', 'fresh start'].entries()) {
      await fake.sendEvent(fake.userPost({ channel: 'D1', text }).message);
      await s.settled(3 + i);
    }
    const afterReset = s.chatRequests().at(-1);
    expect(afterReset?.message).toBe('fresh start');
    expect((afterReset?.metadata as { context?: unknown }).context).toBeUndefined();
  });
});

describe('Discord', () => {
  let d: Stack | undefined;
  afterEach(async () => {
    await d?.close();
    d = undefined;
  });
  const ANN = '200000000000000001';
  const BOB = '200000000000000002';

  const requests = (stack: Stack) => stack.emu.requests.filter((r) => r.endpoint === 'stream' || r.endpoint === 'send');

  it.each(['a', 'b'] as const)(
    'Form %s: a mention in a thread of 12 messages carries them, bot replies as assistant, notices left out',
    async (form) => {
      d = await startStack({ form, relaySettings: context() });
      const { fake, channelId } = d;
      fake.state.users.set(ANN, { id: ANN, username: 'Ann', bot: false });
      fake.state.users.set(BOB, { id: BOB, username: 'Bob', bot: false });
      const threadId = fake.addThread(channelId, BOB, 'planning');
      const bot = fake.botUser.id;
      const seeded: [string, string, Entry | undefined][] = [];
      for (let i = 1; i <= 10; i++) {
        const [who, name] = i % 2 === 0 ? [ANN, 'Ann'] : [BOB, 'Bob'];
        const text = i === 4 ? `<@${ANN}> step ${i}` : `step ${i}`;
        seeded.push([who, text, { author: name, role: 'user', text: i === 4 ? `@Ann step ${i}` : text }]);
      }
      seeded.splice(5, 0, [
        bot,
        'Step 5 first, then 6.',
        { author: 'bridge-bot', role: 'assistant', text: 'Step 5 first, then 6.' },
      ]);
      seeded.splice(7, 0, [bot, MESSAGES.slowDown, undefined]);
      seeded.push([
        bot,
        `partial answer${MESSAGES.interrupted}`,
        { author: 'bridge-bot', role: 'assistant', text: 'partial answer' },
      ]);
      for (const [who, text] of seeded) fake.seedMessage(threadId, who, text);
      const expected = seeded.flatMap(([, , e]) => (e ? [e] : []));
      expect(expected).toHaveLength(12);

      fake.dispatchMessage({
        channelId: threadId,
        authorId: ANN,
        content: mention(fake, 'sum it up'),
        mentionsBot: true,
      });
      await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content.startsWith('You said:')));
      const [req] = requests(d);
      expect(withoutTs((req?.metadata as { context?: unknown }).context)).toEqual(expected);
      expect(req?.message).toBe(transcript(expected, 'sum it up'));
      expect(req?.message).not.toContain(ANN);
    },
  );

  it('a mention in a channel (thread mode) opens its thread and reads no history', async () => {
    d = await startStack({ relaySettings: context() });
    const { fake, channelId } = d;
    fake.seedMessage(channelId, BOB, 'earlier chatter');
    const user = fake.dispatchMessage({ channelId, authorId: ANN, content: mention(fake, 'hi'), mentionsBot: true });
    await fake.waitUntil(() => fake.botMessages(String(user.id)).find((m) => m.content === 'You said: hi'));
    expect(requests(d)[0]?.message).toBe('hi');
  });
});
