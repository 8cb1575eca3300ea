import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GREETING } from '../../src/connectors/slack/assistant.js';
import type { SlackConnector } from '../../src/connectors/slack/connector.js';
import { slackWouldPing } from '../support/slack-controls.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { assertNoSlackPings } from '../fakes/slack/mention-check.js';
import { connectorFor, EchoHandler, slackConfig } from './slack-helpers.js';

const methods = (fake: FakeSlack) => fake.calls.map((c) => c.method);

describe('Slack native streaming and assistant threads', () => {
  let fake: FakeSlack;
  let conn: SlackConnector;
  let relay: EchoHandler;

  const start = async (reply?: (t: string) => string, streaming: 'auto' | 'native' = 'auto') => {
    conn = connectorFor(fake, { config: slackConfig(fake, { streaming }) });
    relay = new EchoHandler(reply);
    await conn.start(relay);
    await fake.waitConnected();
  };

  beforeEach(async () => {
    // Out of chaos: these drive the sinks with a test handler that writes once and never tries
    // again; lost answers are the core writer's to recover (slack-lost-answers.test.ts).
    fake = await startFakeSlack({ limits: {}, chaos: false });
  });

  afterEach(async () => {
    await conn.shutdown();
    await fake.close();
    assertNoSlackPings(fake.calls);
  });

  it('greets a new assistant thread with suggested prompts', async () => {
    await start();
    await fake.sendEvent({
      type: 'assistant_thread_started',
      assistant_thread: { user_id: 'U0USER', channel_id: 'D1', thread_ts: '100.1', context: {} },
      event_ts: '100.2',
    });
    await fake.waitForCall((c) => c.method === 'assistant.threads.setSuggestedPrompts');
    expect(fake.botMessages('D1', '100.1')[0]?.text).toBe(GREETING);
  });

  it('streams a reply natively in an assistant thread, with status and title', async () => {
    await start();
    const root = fake.userPost({ channel: 'D1', text: 'root' });
    const q = fake.userPost({ channel: 'D1', text: 'what is **streaming**? tell me', threadTs: root.ts });
    await fake.sendEvent(q.message);
    await relay.answered(1);
    const msg = relay.received[0];
    expect(msg?.place).toEqual({ platform: 'slack', workspaceId: 'T0FAKE', channelId: 'D1', threadId: root.ts });
    const reply = fake.botMessages('D1', root.ts);
    expect(reply).toHaveLength(1);
    expect(reply[0]?.text).toBe('You said: what is **streaming**? tell me');
    expect(reply[0]?.streaming).toBe(false);
    const m = methods(fake);
    expect(m).toContain('assistant.threads.setStatus');
    expect(m).toContain('assistant.threads.setTitle');
    expect(m).toContain('chat.startStream');
    expect(m).toContain('chat.appendStream');
    expect(m).toContain('chat.stopStream');
    expect(m).not.toContain('chat.update');
  });

  it('falls back to edits when chat.startStream is refused, losing nothing', async () => {
    fake.switches.failStartStream = 'channel_type_not_supported';
    await start();
    const root = fake.userPost({ channel: 'D2', text: 'root' });
    const q = fake.userPost({ channel: 'D2', text: 'fallback please, with several words', threadTs: root.ts });
    await fake.sendEvent(q.message);
    await relay.answered(1);
    const reply = fake.botMessages('D2', root.ts);
    expect(reply).toHaveLength(1);
    expect(reply[0]?.text).toBe('You said: fallback please, with several words');
    expect(methods(fake)).toContain('chat.update');
  });

  it('falls back mid-stream when appends fail, without repeating text', async () => {
    fake.switches.failAppendStream = 'message_not_in_streaming_state';
    await start();
    const root = fake.userPost({ channel: 'D3', text: 'root' });
    const q = fake.userPost({ channel: 'D3', text: 'a reply that needs several appends to finish', threadTs: root.ts });
    await fake.sendEvent(q.message);
    await relay.answered(1);
    const reply = fake.botMessages('D3', root.ts);
    expect(reply).toHaveLength(1);
    expect(reply[0]?.text).toBe('You said: a reply that needs several appends to finish');
    expect(reply[0]?.streaming).toBe(false);
  });

  it('streams natively in a channel thread when configured, addressed to the asker', async () => {
    await start(undefined, 'native');
    const post = fake.userPost({ channel: 'C5', text: '<@U0BOT> native in a channel', user: 'U0ASK' });
    await fake.sendEvent(post.mention ?? {});
    await relay.answered(1);
    const start0 = fake.calls.find((c) => c.method === 'chat.startStream');
    expect(start0?.args).toMatchObject({ recipient_user_id: 'U0ASK', recipient_team_id: 'T0FAKE', thread_ts: post.ts });
    expect(fake.botMessages('C5', post.ts)[0]?.text).toBe('You said: native in a channel');
  });

  // Slack's Agent messaging experience: DMs are threads, so a top-level DM is answered in a
  // thread under it, streamed natively; its conversation stays the DM's own.
  it('streams a top-level DM natively in a thread under it in auto mode', async () => {
    await start();
    const q = fake.userPost({ channel: 'D4', text: 'top level' });
    await fake.sendEvent(q.message);
    await relay.answered(1);
    expect(relay.received[0]?.place).toEqual({ platform: 'slack', workspaceId: 'T0FAKE', channelId: 'D4' });
    expect(fake.botMessages('D4')).toEqual([]);
    expect(fake.botMessages('D4', q.ts).map((m) => m.text)).toEqual(['You said: top level']);
    expect(methods(fake)).toContain('chat.startStream');
    expect(methods(fake)).not.toContain('chat.update');
  });

  it('never lets upstream mentions reach Slack raw, in either mode', async () => {
    const evil = 'hey <!channel> <!here> <!everyone> <@U0ADMIN> <#C0GEN> <!subteam^S1|@devs> @channel & done';
    await start(() => evil);
    const root = fake.userPost({ channel: 'D6', text: 'root' });
    await fake.sendEvent(fake.userPost({ channel: 'D6', text: 'x', threadTs: root.ts }).message);
    const post = fake.userPost({ channel: 'C6', text: '<@U0BOT> y' });
    await fake.sendEvent(post.mention ?? {});
    await relay.answered(2);
    const texts = [...fake.botMessages('D6', root.ts), ...fake.botMessages('C6', post.ts)].flatMap((m) => m.versions);
    expect(texts.length).toBeGreaterThan(2);
    for (const t of texts) expect(slackWouldPing(t)).toBe(false);
    // Appends are checked too: each call's own text.
    for (const c of fake.calls.filter((x) => x.method.startsWith('chat.'))) {
      for (const k of ['text', 'markdown_text']) {
        const v = c.args[k];
        if (typeof v === 'string') expect(slackWouldPing(v)).toBe(false);
      }
    }
  });
});
