import { afterEach, expect, it } from 'vitest';
import { GREETING, SUGGESTED_PROMPTS } from '../../src/connectors/slack/assistant.js';
import { PROMPTS_TITLE } from '../../src/connectors/slack/agent-home.js';
import { SET_STATUS_METHOD } from '../../src/connectors/slack/agent-sessions.js';
import { LOADING_MESSAGES } from '../../src/connectors/slack/destination.js';
import { MESSAGES } from '../../src/core/user-messages.js';
import { replyText, splitText } from '../../src/emulator/replies.js';
import { markdownTextOracle } from './slack-parts.js';
import { type SlackStack, type SlackStackOptions, startSlackStack } from './slack-stack.js';

// Slack's Agent messaging experience (manifest `agent_view`), through real Bolt against the fake
// Slack, the relay on SQLite and the emulator: the Messages tab's first open greets with prompts
// once; every DM message, top-level included, is answered in a thread by a native stream with
// the thread's status and Slack's own Stop; app_context_changed reaches the upstream's metadata.
// An app still on assistant_view keeps its assistant threads.

let s: SlackStack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

async function start(opts: SlackStackOptions = {}): Promise<SlackStack> {
  s = await startSlackStack({ chunkDelayMs: 5, streaming: 'auto', fake: { experience: 'agent' }, ...opts });
  return s;
}

/** A first open of the Messages tab by `user` (in DM `channel`), awaited until its prompts are set. */
async function greeted(stack: SlackStack, channel: string, user: string): Promise<void> {
  await stack.fake.sendEvent(stack.fake.agent.homeOpened({ channel, user }));
  await stack.fake.waitForCall(
    (c) => c.method === 'assistant.threads.setSuggestedPrompts' && c.args.channel_id === channel,
  );
}

it("the Messages tab's first open greets the user with suggested prompts, once", async () => {
  const stack = await start();
  const { fake } = stack;
  await fake.sendEvent(fake.agent.homeOpened({ channel: 'D1' }));
  await fake.waitForCall((c) => c.method === 'assistant.threads.setSuggestedPrompts');
  const shown = fake.messages('D1');
  expect([...shown.values()]).toEqual([GREETING]);
  // The prompts show under the greeting (set without thread_ts, which an agent app must leave out).
  const [greetingTs] = [...shown.keys()];
  expect(fake.agent.prompts('D1')).toEqual({
    channel: 'D1',
    ts: greetingTs,
    title: PROMPTS_TITLE,
    prompts: SUGGESTED_PROMPTS,
  });
  const call = fake.calls.find((c) => c.method === 'assistant.threads.setSuggestedPrompts');
  expect(call?.args.thread_ts).toBeUndefined();

  // Opening it again, or another tab, says nothing more.
  await fake.sendEvent(fake.agent.homeOpened({ channel: 'D1' }));
  await fake.sendEvent(fake.agent.homeOpened({ channel: 'D1', tab: 'home' }));
  await fake.sendEvent(fake.agent.homeOpened({ channel: 'D2', user: 'U0OTHER', tab: 'about' }));
  // A new user's open, sent after those, is greeted: the ones before it were handled by then.
  await greeted(stack, 'D3', 'U0THIRD');
  expect([...fake.messages('D1').values()]).toEqual([GREETING]);
  expect(fake.messages('D2').size).toBe(0);
  expect(fake.calls.filter((c) => c.method === 'chat.postMessage').map((c) => c.args.channel)).toEqual(['D1', 'D3']);
});

it('a DM that already holds messages is not greeted (a restart forgets who was greeted)', async () => {
  const stack = await start();
  const { fake } = stack;
  fake.seedMessage('D1', { text: 'an earlier question', user: 'U0USER' });
  await fake.sendEvent(fake.agent.homeOpened({ channel: 'D1' }));
  await fake.waitForCall((c) => c.method === 'conversations.history');
  await greeted(stack, 'D3', 'U0THIRD');
  expect(fake.calls.filter((c) => c.method === 'chat.postMessage').map((c) => c.args.channel)).toEqual(['D3']);
  expect(fake.agent.prompts('D1')).toBeUndefined();
});

it('a top-level DM is answered in a thread under it: native stream, status, session, exact text', async () => {
  const stack = await start();
  const { fake } = stack;
  const q = 'hello agent [chunks 6] [delay 20]';
  const ask = fake.userPost({ channel: 'D1', text: q });
  await fake.sendEvent(ask.message);
  const [result] = await stack.settled(1);
  expect(result?.status).toBe('answered');
  // One reply, in the thread the user's message opens; nothing at the top of the DM.
  expect(fake.botMessages('D1')).toEqual([]);
  const replies = fake.botMessages('D1', ask.ts);
  expect(replies).toHaveLength(1);
  expect(replies[0]?.text).toBe(markdownTextOracle(replyText(q)));
  expect(replies[0]?.streaming).toBe(false);
  const methods = fake.calls.map((c) => c.method);
  expect(methods).toContain('chat.startStream');
  expect(methods).toContain('chat.stopStream');
  expect(methods).not.toContain('chat.update');
  expect(methods).not.toContain('reactions.add');
  // The thread's status with its loading messages, cleared at the end; Slack's Stop was held.
  const statuses = fake.agent.statuses('D1', ask.ts);
  expect(statuses[0]).toEqual({ status: 'is thinking…', loading: LOADING_MESSAGES });
  expect(statuses.at(-1)).toEqual({ status: '' });
  await expect.poll(() => fake.agentStatuses('D1', ask.ts)).toEqual(['processing', 'active']);
  // The conversation is the DM's own: the next top-level message continues it.
  const next = fake.userPost({ channel: 'D1', text: 'and again' });
  await fake.sendEvent(next.message);
  await stack.settled(2);
  expect(fake.botMessages('D1', next.ts).map((m) => m.text)).toEqual(['You said: and again']);
  const [a, b] = stack.chatRequests();
  expect(b?.conversationId).toBe(a?.conversationId);
});

it("Slack's Stop in the thread of a top-level DM stops its reply: text so far and the note", async () => {
  const stack = await start();
  const { fake } = stack;
  const q = 'tell me a story [chunks 10] [stall 6]';
  const soFar = splitText(replyText(q), 10).slice(0, 6).join('');
  const ask = fake.userPost({ channel: 'D1', text: q });
  await fake.sendEvent(ask.message);
  const reply = () => fake.botMessages('D1', ask.ts)[0];
  await expect
    .poll(() => reply()?.text, { timeout: 5000 })
    .toBe(markdownTextOracle(soFar.slice(0, soFar.lastIndexOf(' ') + 1)));
  expect(fake.agentStatuses('D1', ask.ts)).toEqual(['processing']);

  // Another user's press stops nothing; the asker's does.
  await fake.sendEvent(fake.sessionStopped({ channel: 'D1', threadTs: ask.ts, user: 'U0OTHER' }));
  await expect.poll(() => stack.placeStops.map((p) => p.result)).toEqual(['not_owner']);
  await fake.sendEvent(fake.sessionStopped({ channel: 'D1', threadTs: ask.ts }));
  const [result] = await stack.settled(1);
  expect(result?.status).toBe('answered');
  await expect.poll(() => stack.emu.openStreams).toBe(0);
  expect(reply()?.text).toBe(markdownTextOracle(soFar + MESSAGES.stopped));
  expect(fake.botMessages('D1', ask.ts)).toHaveLength(1);
  // The Stop reached the DM's own place, where the reply's conversation lives.
  expect(stack.placeStops.map((p) => [p.place, p.result])).toEqual([
    [{ platform: 'slack', workspaceId: 'T0FAKE', channelId: 'D1' }, 'not_owner'],
    [{ platform: 'slack', workspaceId: 'T0FAKE', channelId: 'D1' }, 'stopped'],
  ]);
  await expect.poll(() => fake.agentStatuses('D1', ask.ts)).toEqual(['processing', 'active']);
  expect(fake.calls.filter((c) => c.result === 'message_not_in_streaming_state')).toEqual([]);
});

it('`stop` written in the thread where a top-level DM is answered stops that reply', async () => {
  const stack = await start();
  const { fake } = stack;
  const q = 'tell me a story [chunks 10] [stall 6]';
  const soFar = splitText(replyText(q), 10).slice(0, 6).join('');
  const ask = fake.userPost({ channel: 'D1', text: q });
  await fake.sendEvent(ask.message);
  const reply = () => fake.botMessages('D1', ask.ts)[0];
  await expect
    .poll(() => reply()?.text, { timeout: 5000 })
    .toBe(markdownTextOracle(soFar.slice(0, soFar.lastIndexOf(' ') + 1)));
  await fake.sendEvent(fake.userPost({ channel: 'D1', text: 'stop', threadTs: ask.ts }).message);
  const results = await stack.settled(2);
  expect(results.map((r) => r.status).sort()).toEqual(['answered', 'stopped']);
  expect(reply()?.text).toBe(markdownTextOracle(soFar + MESSAGES.stopped));
  // `stop` was not a question: one reply in the thread, one upstream call.
  expect(fake.botMessages('D1', ask.ts)).toHaveLength(1);
  expect(stack.chatRequests().map((r) => r.message)).toEqual([q]);
});

it("the channel the user views (app_context_changed, or the message's app_context) goes upstream", async () => {
  const stack = await start();
  const { fake } = stack;
  await fake.sendEvent(fake.agent.contextChanged({ channelId: 'C0VIEWED' }));
  await fake.sendEvent(fake.userPost({ channel: 'D1', text: 'what is this channel about?' }).message);
  await stack.settled(1);
  // A message that carries its own context wins over the last event.
  await fake.sendEvent(fake.userPost({ channel: 'D1', text: 'and this one?', appContext: 'C0OTHER' }).message);
  await stack.settled(2);
  // Another user's view is theirs alone.
  await fake.sendEvent(fake.userPost({ channel: 'D2', text: 'hi', user: 'U0TWO' }).message);
  await stack.settled(3);
  const viewing = stack.chatRequests().map((r) => (r.metadata as { viewing?: unknown }).viewing);
  expect(viewing).toEqual([
    [{ kind: 'channel', id: 'C0VIEWED', workspaceId: 'T0FAKE' }],
    [{ kind: 'channel', id: 'C0OTHER', workspaceId: 'T0FAKE' }],
    undefined,
  ]);
});

it("app_context_changed in Slack's sample shape (no user: the authorization's) is read too", async () => {
  const stack = await start();
  const { fake } = stack;
  const body = fake.envelope(fake.agent.contextChanged({ channelId: 'C0SAMPLE', shape: 'sample' }));
  body.authorizations = [{ team_id: 'T0FAKE', user_id: 'U0USER', is_bot: false, is_enterprise_install: false }];
  await fake.deliverEvent(body);
  await fake.sendEvent(fake.userPost({ channel: 'D1', text: 'here?' }).message);
  await stack.settled(1);
  expect((stack.chatRequests()[0]?.metadata as { viewing?: unknown }).viewing).toEqual([
    { kind: 'channel', id: 'C0SAMPLE', workspaceId: 'T0FAKE' },
  ]);
});

it('an app still on assistant_view keeps its assistant threads: greeting, prompts, native reply', async () => {
  const stack = await start({ fake: { experience: 'assistant' } });
  const { fake } = stack;
  await fake.sendEvent({
    type: 'assistant_thread_started',
    assistant_thread: { user_id: 'U0USER', channel_id: 'D1', thread_ts: '100.1', context: { channel_id: 'C0SIDE' } },
    event_ts: '100.2',
  });
  await fake.waitForCall((c) => c.method === 'assistant.threads.setSuggestedPrompts');
  expect(fake.botMessages('D1', '100.1').map((m) => m.text)).toEqual([GREETING]);
  expect(fake.agent.prompts('D1')?.ts).toBe('100.1');
  const root = fake.userPost({ channel: 'D1', text: 'root' });
  const q = fake.userPost({ channel: 'D1', text: 'in the assistant thread', threadTs: root.ts });
  await fake.sendEvent(q.message);
  await stack.settled(1);
  expect(fake.botMessages('D1', root.ts).map((m) => m.text)).toEqual(['You said: in the assistant thread']);
  expect(fake.calls.some((c) => c.method === 'chat.startStream')).toBe(true);
  expect(fake.agent.statuses('D1', root.ts)[0]?.status).toBe('is thinking…');
  expect(fake.calls.some((c) => c.method === SET_STATUS_METHOD)).toBe(true);
  // The assistant thread's context (the channel beside it) goes upstream like the agent's.
  expect((stack.chatRequests()[0]?.metadata as { viewing?: unknown }).viewing).toEqual([
    { kind: 'channel', id: 'C0SIDE' },
  ]);
});

it('a status Slack refuses leaves the reaction as the working sign; the reply is whole', async () => {
  const stack = await start();
  const { fake } = stack;
  fake.switches.failThreadStatus = 'not_allowed_token_type';
  const ask = fake.userPost({ channel: 'D1', text: 'still answered' });
  await fake.sendEvent(ask.message);
  await stack.settled(1);
  expect(fake.botMessages('D1', ask.ts).map((m) => m.text)).toEqual(['You said: still answered']);
  const signs = fake.calls.filter((c) => c.method.startsWith('reactions.')).map((c) => [c.method, c.args.timestamp]);
  expect(signs).toEqual([
    ['reactions.add', ask.ts],
    ['reactions.remove', ask.ts],
  ]);
});
