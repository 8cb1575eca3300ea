import { afterEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.js';
import { ANN, BOB, type Stack, startStack } from './discord/stack.js';
import { type SlackStack, startSlackStack } from './slack-stack.js';

// The OpenAI-compatible upstream forms (issue 40) end to end: the real Slack (Bolt) and Discord
// (discord.js) paths against their fakes, the relay on SQLite, the upstream client against the
// emulator speaking Chat Completions or Responses. Asserted: what users see, and what the
// upstream received (the earlier turns; the previous response's id).

let slack: SlackStack | undefined;
let discord: Stack | undefined;
afterEach(async () => {
  await slack?.close();
  await discord?.close();
  slack = undefined;
  discord = undefined;
});

type Body = Record<string, unknown>;
const turns = (emu: Emulator): Body[] =>
  emu.requests.filter((r) => r.endpoint === 'stream' || r.endpoint === 'send').map((r) => r.body as Body);
const said = (b: Body | undefined) =>
  (b?.messages as { role: string; content: string }[]).map((m) => `${m.role}: ${m.content}`);

describe('Chat Completions', () => {
  it('Slack: mention → thread → follow-up sends the earlier turns; the transcript is in the store', async () => {
    slack = await startSlackStack({ form: 'chat-completions', openAi: { systemPrompt: 'You are terse.' } });
    const { fake } = slack;
    const post = fake.userPost({ channel: 'C1', text: '<@U0BOT> what is a bridge?', user: 'U0ANN' });
    await fake.sendEvent(post.mention ?? {});
    await slack.settled(1);
    const follow = fake.userPost({ channel: 'C1', text: 'and then?', threadTs: post.ts, user: 'U0ANN' });
    await fake.sendEvent(follow.message);
    await slack.settled(2);
    expect(fake.botMessages('C1', post.ts).map((m) => m.text)).toEqual([
      'You said: what is a bridge?',
      'You said: and then?',
    ]);
    const [, second] = turns(slack.emu);
    expect(second).toMatchObject({ model: 'demo-bot', stream: true });
    expect(said(second)).toEqual([
      'system: You are terse.',
      'user: what is a bridge?',
      'assistant: You said: what is a bridge?',
      'user: and then?',
    ]);
    const place = { platform: 'slack' as const, workspaceId: 'T0FAKE', channelId: 'C1', threadId: post.ts };
    const conv = await slack.store.conversations.get(place);
    expect(conv?.flavor).toBe('chat-completions');
    expect((await slack.store.transcripts.turns(conv?.upstreamId ?? '')).map((t) => t.text)).toEqual([
      'what is a bridge?',
      'You said: what is a bridge?',
      'and then?',
      'You said: and then?',
    ]);
  });

  it('Slack: `reset` in a DM forgets the conversation: the next turn is sent alone', async () => {
    slack = await startSlackStack({ form: 'chat-completions' });
    const { fake } = slack;
    for (const [i, text] of ['hello', 'again', 'reset', 'fresh'].entries()) {
      await fake.sendEvent(fake.userPost({ channel: 'D1', text }).message);
      await slack.settled(i + 1);
    }
    const sent = turns(slack.emu);
    expect(sent).toHaveLength(3);
    expect(said(sent[1])).toEqual(['user: hello', 'assistant: You said: hello', 'user: again']);
    expect(said(sent[2])).toEqual(['user: fresh']);
  });

  it('Discord: follow-ups in the thread carry the conversation, /reset forgets it', async () => {
    discord = await startStack({ form: 'chat-completions' });
    const { fake } = discord;
    const { threadId } = discord.ask('one');
    await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: one'));
    fake.dispatchMessage({ channelId: threadId, authorId: ANN, content: 'two' });
    await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: two'));
    expect(said(turns(discord.emu)[1])).toEqual(['user: one', 'assistant: You said: one', 'user: two']);

    const reset = fake.dispatchInteraction({ channelId: threadId, userId: ANN, name: 'reset' });
    await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.interactionId === reset.id && m.ephemeral));
    fake.dispatchMessage({ channelId: threadId, authorId: ANN, content: 'three' });
    await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: three'));
    expect(said(turns(discord.emu)[2])).toEqual(['user: three']);
  });

  it('Discord: a transcript that outgrows its bound keeps the newest turns', async () => {
    discord = await startStack({ form: 'chat-completions', openAi: { transcript: { maxTurns: 4, maxChars: 10_000 } } });
    const { fake } = discord;
    const dm = fake.addDm(BOB);
    for (const text of ['m1', 'm2', 'm3', 'm4']) {
      fake.dispatchMessage({ channelId: dm, authorId: BOB, content: text });
      await fake.waitUntil(() => fake.botMessages(dm).find((m) => m.content === `You said: ${text}`));
    }
    expect(said(turns(discord.emu)[3])).toEqual([
      'user: m2',
      'assistant: You said: m2',
      'user: m3',
      'assistant: You said: m3',
      'user: m4',
    ]);
  });
});

describe('Responses', () => {
  it('Slack: each turn continues from the previous response; an expired one renews with the thread as context', async () => {
    slack = await startSlackStack({
      form: 'responses',
      relaySettings: { context: { mode: 'message', maxMessages: 30, maxChars: 6000 } },
    });
    const { fake, emu } = slack;
    const post = fake.userPost({ channel: 'C1', text: '<@U0BOT> remember the word tangerine', user: 'U0ANN' });
    await fake.sendEvent(post.mention ?? {});
    await slack.settled(1);
    const follow = fake.userPost({ channel: 'C1', text: 'which word?', threadTs: post.ts, user: 'U0ANN' });
    await fake.sendEvent(follow.message);
    await slack.settled(2);
    const [first, second] = turns(emu);
    expect(first?.previous_response_id).toBeUndefined();
    const id1 = second?.previous_response_id as string;
    expect(id1).toMatch(/^resp_/);
    expect(emu.conversation(id1)?.messages.map((m) => m.content)).toEqual([
      'remember the word tangerine',
      'You said: remember the word tangerine',
      'which word?',
      'You said: which word?',
    ]);

    // The server forgets the conversation: the next turn is refused (404), then renewed.
    const place = { platform: 'slack' as const, workspaceId: 'T0FAKE', channelId: 'C1', threadId: post.ts };
    const id2 = (await slack.store.conversations.get(place))?.upstreamId as string;
    expect(id2).toMatch(/^resp_/);
    expect(id2).not.toBe(id1);
    expect(emu.expire(id2)).toBe(true);
    const third = fake.userPost({ channel: 'C1', text: 'still there?', threadTs: post.ts, user: 'U0ANN' });
    await fake.sendEvent(third.message);
    await slack.settled(3);
    const replies = fake.botMessages('C1', post.ts).map((m) => m.text);
    // The renewal note (with a zero-width guard in its emphasis), then the reply, context echoed.
    expect(replies[2]).toContain('This is a new conversation; the recent messages here were carried over as context.');
    expect(replies[2]).toMatch(/still there\?$/);
    const [, , refused, renewed] = turns(emu);
    expect(refused?.previous_response_id).toBe(id2);
    expect(renewed?.previous_response_id).toBeUndefined();
    expect(renewed?.input).toContain('remember the word tangerine');
    expect(emu.requests.find((r) => r.body === refused)?.status).toBe(404);
  });

  it('Discord: follow-ups continue by response id, renewal after expiry, /reset starts over', async () => {
    discord = await startStack({ form: 'responses' });
    const { fake, emu } = discord;
    const { threadId } = discord.ask('one');
    await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: one'));
    fake.dispatchMessage({ channelId: threadId, authorId: ANN, content: 'two' });
    await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: two'));
    const second = turns(emu)[1];
    expect(second?.previous_response_id).toMatch(/^resp_/);

    // The place's mapping holds the latest response's id (renewed per turn).
    const rows = discord.store.db
      .prepare("SELECT upstream_id AS id FROM conversations WHERE flavor = 'responses'")
      .all();
    expect(rows).toHaveLength(1);
    const latest = (rows[0] as { id: string }).id;
    expect(latest).toMatch(/^resp_/);
    expect(emu.expire(latest as string)).toBe(true);
    fake.dispatchMessage({ channelId: threadId, authorId: ANN, content: 'three' });
    const renewed = await fake.waitUntil(() =>
      fake.botMessages(threadId).find((m) => m.content.endsWith('You said: three')),
    );
    expect(renewed.content).toContain('new conversation');
    expect(
      turns(emu)
        .slice(2)
        .map((b) => b.previous_response_id),
    ).toEqual([latest, undefined]);

    const reset = fake.dispatchInteraction({ channelId: threadId, userId: ANN, name: 'reset' });
    await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.interactionId === reset.id && m.ephemeral));
    fake.dispatchMessage({ channelId: threadId, authorId: ANN, content: 'four' });
    await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === 'You said: four'));
    expect(turns(emu)[4]?.previous_response_id).toBeUndefined();
  });
});
