import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SlackConnector } from '../../src/connectors/slack/connector.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { assertNoSlackPings } from '../fakes/slack/mention-check.js';
import { connectorFor, EchoHandler } from './slack-helpers.js';

describe('Slack connector over Socket Mode (real Bolt, fake Slack)', () => {
  let fake: FakeSlack;
  let conn: SlackConnector;
  let relay: EchoHandler;

  beforeEach(async () => {
    // No rate limits here: the stand-in relay has no scheduler (slack-relay tests have one).
    fake = await startFakeSlack({ limits: {} });
    conn = connectorFor(fake, { socketPingTimeoutMs: 500 });
    relay = new EchoHandler();
    await conn.start(relay);
    await fake.waitConnected();
  });

  afterEach(async () => {
    await conn.shutdown();
    await fake.close();
    assertNoSlackPings(fake.calls);
  });

  it('connects over Socket Mode and reports ready', () => {
    expect(fake.socketConnected).toBe(true);
    expect(conn.isReady()).toBe(true);
    expect(fake.calls.some((c) => c.method === 'apps.connections.open')).toBe(true);
  });

  it('answers a mention in its thread, streamed by edits', async () => {
    const post = fake.userPost({ channel: 'C1', text: '<@U0BOT> hello there, how are you?' });
    await fake.sendEvent(post.message);
    await fake.sendEvent(post.mention ?? {});
    await relay.answered(1);
    await conn.idle();
    expect(relay.received).toHaveLength(1);
    const msg = relay.received[0];
    expect(msg?.text).toBe('hello there, how are you?');
    expect(msg?.place).toEqual({ platform: 'slack', workspaceId: 'T0FAKE', channelId: 'C1', threadId: post.ts });
    expect(msg?.eventId).toBe(`C1:${post.ts}`);
    const replies = fake.botMessages('C1', post.ts);
    expect(replies).toHaveLength(1);
    expect(replies[0]?.text).toBe('You said: hello there, how are you?');
    expect(replies[0]?.versions.length).toBeGreaterThan(2);
    expect(fake.calls.some((c) => c.method === 'reactions.add')).toBe(true);
  });

  it('continues in the thread without a mention, and ignores threads the bot is not in', async () => {
    const first = fake.userPost({ channel: 'C1', text: '<@U0BOT> start' });
    await fake.sendEvent(first.mention ?? {});
    await relay.answered(1);
    const follow = fake.userPost({ channel: 'C1', text: 'and more', threadTs: first.ts });
    await fake.sendEvent(follow.message);
    await relay.answered(2);
    expect(relay.received[1]?.place.threadId).toBe(first.ts);
    expect(relay.received[1]?.mentionsBot).toBe(false);

    const other = fake.userPost({ channel: 'C1', text: 'people talking' });
    const inOther = fake.userPost({ channel: 'C1', text: 'no bot here', threadTs: other.ts });
    await fake.sendEvent(other.message);
    await fake.sendEvent(inOther.message);
    await conn.idle();
    expect(relay.received).toHaveLength(2);
  });

  it('answers a DM and ignores bots, edits and its own messages', async () => {
    const dm = fake.userPost({ channel: 'D1', text: 'hi in private' });
    await fake.sendEvent(dm.message);
    await fake.sendEvent({ ...dm.message, ts: '1.1', bot_id: 'B9' });
    await fake.sendEvent({ ...dm.message, ts: '1.2', subtype: 'message_changed' });
    await fake.sendEvent({ ...dm.message, ts: '1.3', user: 'U0BOT' });
    await relay.answered(1);
    await conn.idle();
    expect(relay.received).toHaveLength(1);
    expect(relay.received[0]?.isDm).toBe(true);
    expect(relay.received[0]?.place).toEqual({ platform: 'slack', workspaceId: 'T0FAKE', channelId: 'D1' });
    expect(fake.agent.replies('D1')[0]?.text).toBe('You said: hi in private');
  });

  it('hands a retried event to the relay with the same id', async () => {
    const post = fake.userPost({ channel: 'C2', text: '<@U0BOT> once' });
    await fake.sendEvent(post.mention ?? {});
    await fake.sendEvent(post.mention ?? {}, { retryNum: 1 });
    await fake.sendEvent(post.mention ?? {}, { retryNum: 2 });
    await relay.answered(1);
    await conn.idle();
    expect(relay.received).toHaveLength(1);
    expect(fake.botMessages('C2', post.ts)).toHaveLength(1);
  });

  it('reconnects after the socket drops', async () => {
    const before = fake.socketConnections;
    fake.dropSocket();
    await fake.waitConnected();
    expect(fake.socketConnections).toBe(before + 1);
    const post = fake.userPost({ channel: 'C3', text: '<@U0BOT> back?' });
    await fake.sendEvent(post.mention ?? {});
    await relay.answered(1);
    expect(fake.botMessages('C3', post.ts)).toHaveLength(1);
  });

  it('reconnects when Slack asks for a refresh', async () => {
    const before = fake.socketConnections;
    fake.refreshSocket();
    await expect.poll(() => fake.socketConnections, { timeout: 5000 }).toBeGreaterThan(before);
    await fake.waitConnected();
    // The connector hears of the new socket from Bolt's own event, a moment after the fake does.
    await expect.poll(() => conn.isReady(), { timeout: 5000 }).toBe(true);
  });

  it('marks a reply a crash left behind as interrupted', async () => {
    const post = fake.userPost({ channel: 'C4', text: '<@U0BOT> crash soon' });
    await fake.sendEvent(post.mention ?? {});
    await relay.answered(1);
    const msg = relay.received[0];
    const reply = fake.botMessages('C4', post.ts)[0];
    if (!msg || !reply) throw new Error('no reply');
    await conn.markInterrupted(msg.sink.target, reply.ts, 'You said: crash\n\n_(reply interrupted)_');
    expect(fake.message('C4', reply.ts)?.text).toBe(
      // Written out: Slack needs the italic underscores fenced by zero-width spaces.
      'You said: crash\n\n\u200B_(reply interrupted)_\u200B',
    );
  });

  it('postInterrupted tells the thread of a reply a crash cut before its first write', async () => {
    const post = fake.userPost({ channel: 'C5', text: '<@U0BOT> crash before text' });
    await fake.sendEvent(post.mention ?? {});
    await relay.answered(1);
    const msg = relay.received.at(-1);
    if (!msg) throw new Error('no message');
    await conn.postInterrupted?.(
      JSON.parse(JSON.stringify(msg.sink.target)),
      'The reply was interrupted. Please try again.',
    );
    expect(fake.botMessages('C5', post.ts).at(-1)?.text).toBe('The reply was interrupted. Please try again.');
  });

  it('after a restart, knows the threads it replied in from Slack (conversations.replies)', async () => {
    const first = fake.userPost({ channel: 'C7', text: '<@U0BOT> before restart' });
    await fake.sendEvent(first.mention ?? {});
    await relay.answered(1);
    await conn.shutdown();
    conn = connectorFor(fake, { socketPingTimeoutMs: 500 });
    relay = new EchoHandler();
    await conn.start(relay);
    await fake.waitConnected();
    const follow = fake.userPost({ channel: 'C7', text: 'still there?', threadTs: first.ts });
    await fake.sendEvent(follow.message);
    await relay.answered(1);
    expect(relay.received[0]?.place.threadId).toBe(first.ts);
    expect(fake.calls.some((c) => c.method === 'conversations.replies' && c.args.ts === first.ts)).toBe(true);
  });
});
