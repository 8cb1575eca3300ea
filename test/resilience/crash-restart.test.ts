import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markdownTextOracle, mrkdwnOracle } from '../integration/slack-parts.js';
import type { InFlightRecord } from '../../src/core/ports.js';
import { fencesBalanced } from '../../src/core/reply/fences.js';
import { MESSAGES } from '../../src/core/user-messages.js';
import { type Emulator, longMarkdown } from '../../src/emulator/index.js';
import { openStore } from '../../src/store/sqlite/index.js';
import type { FakeDiscord } from '../fakes/discord/index.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { type BridgeChild, type ChildWorld, killHard, spawnBridge, startChildWorld } from './bridge-child.js';
import { waitFor } from './harness.js';

// A crash: the real bridge (`node dist/cli.js start`) talks to a fake Discord and the emulator
// in this process; it is SIGKILLed while a long reply streams, then started again on the same
// database. The conversation mapping must survive (the next message in the thread reaches the
// upstream with the same conversation id), the half-written message must be edited to end with
// the interruption note, and the next message must be answered.

const API_KEY = 'crash-key';
const BOT = 'demo-bot';
const echo = (t: string) => `You said: ${t}`;

/** Inside an open code block, well past its first line (so the last recorded text is too). */
const deepInCode = (text: string) => !fencesBalanced(text) && text.length - text.lastIndexOf('```') > 150;

/** The line that closes the (```) code block a text ends in. */
const closeFence = (text: string) => (text.endsWith('\n') ? '```' : '\n```');

/** The reply the dead process left 'streaming' in its database (read while it is down). */
async function openRecord(dbPath: string): Promise<InFlightRecord> {
  const store = openStore(dbPath);
  try {
    const open = await store.inflight.listOpen();
    expect(open).toHaveLength(1);
    return open[0] as InFlightRecord;
  } finally {
    await store.close();
  }
}

/** A child bridge on Slack Socket Mode (Form B), its database in its own folder under `dir`. */
function slackBridgeEnv(slack: FakeSlack, streaming: 'edit' | 'native', folder: string) {
  return {
    CHAT_API_URL: emu.url,
    CHAT_API_KEY: API_KEY,
    CHAT_API_FORM: 'b',
    CHAT_BOT_ID: BOT,
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_APP_TOKEN: slack.appToken,
    SLACK_API_URL: slack.apiUrl,
    SLACK_STREAMING: streaming,
    DATABASE_PATH: join(dir, folder, 'bridge.db'),
    STREAM_EDIT_INTERVAL_MS: '250',
  };
}

let fake: FakeDiscord;
let emu: Emulator;
let dir: string;
let env: Record<string, string>;
let bridge: BridgeChild | undefined;

let world: ChildWorld | undefined;

beforeAll(async () => {
  world = await startChildWorld('crash', API_KEY, BOT);
  ({ fake, emu, dir } = world);
  env = {
    CHAT_API_URL: emu.url,
    CHAT_API_KEY: API_KEY,
    CHAT_API_FORM: 'a',
    CHAT_BOT_ID: BOT,
    DISCORD_BOT_TOKEN: fake.token,
    DISCORD_API_URL: fake.apiUrl,
    DISCORD_REPLY_MODE: 'thread',
    DATABASE_PATH: join(dir, 'data', 'bridge.db'),
    STREAM_EDIT_INTERVAL_MS: '250',
  };
}, 120_000);

afterAll(async () => {
  await killHard(bridge);
  await world?.close();
});

describe('SIGKILL mid-stream, then a restart on the same database', () => {
  it('keeps the mapping, marks the half-written reply interrupted, and answers the next message', async () => {
    const guild = fake.addGuild('g');
    const channel = fake.addChannel(guild, 'general');
    bridge = await spawnBridge(env);
    await bridge.waitReady();

    // 1. A mention opens a thread (named after the user's message) with the reply in it.
    const first = fake.dispatchMessage({
      channelId: channel,
      authorId: '300000000000000001',
      content: `<@${fake.botUser.id}> hello one`,
      mentionsBot: true,
    });
    const thread = String(first.id);
    await fake.waitUntil(
      () => fake.botMessages(thread).some((m) => m.content === echo('hello one')),
      15_000,
      'the first reply in the thread',
    );
    const firstTurn = emu.requests.find((r) => r.message === 'hello one');
    expect(firstTurn?.conversationId).toBeUndefined(); // Form A: the upstream names the conversation

    // 2. A slow long reply in the thread (no mention needed there); kill after its first post.
    const slow = 'slow one [long 3000] [delay 30]';
    fake.dispatchMessage({ channelId: thread, authorId: '300000000000000001', content: slow });
    // Killed while a code block is being written (the hardest place: the note must not land in it).
    const half = await fake.waitUntil(
      () => {
        const m = fake.botMessages(thread)[1];
        return m !== undefined && deepInCode(m.content) ? m : undefined;
      },
      15_000,
      'the slow reply to be inside a code block',
    );
    const secondTurn = emu.requests.find((r) => r.message === slow);
    const conversationId = secondTurn?.conversationId ?? '';
    expect(conversationId).toMatch(/^conv_/);
    // ...and it is the conversation the first message started
    expect(emu.conversation(conversationId)?.messages[0]?.content).toBe('hello one');
    bridge.kill('SIGKILL');
    await bridge.exited;
    expect(bridge.exitSignal).toBe('SIGKILL');
    const shownAtKill = fake.state.messages.get(half.id)?.content ?? '';
    const full = longMarkdown(3000);
    expect(full.startsWith(shownAtKill)).toBe(true);
    const rec = await openRecord(env.DATABASE_PATH as string);
    expect(rec.messageIds.at(-1)).toBe(half.id);
    expect(rec.upstreamId).toBe(conversationId);
    // what the record holds is what was shown (or the edit before, if the kill fell in between)
    expect(shownAtKill.startsWith(rec.lastText)).toBe(true);
    expect(fencesBalanced(rec.lastText)).toBe(false);

    // 3. Restart on the same database: the half-written message is marked interrupted: the text
    // so far, the code block closed, then the note (not inside the block).
    bridge = await spawnBridge(env);
    await bridge.waitReady();
    const expected = `${rec.lastText}${closeFence(rec.lastText)}${MESSAGES.interrupted}`;
    await fake.waitUntil(
      () => fake.state.messages.get(half.id)?.content === expected,
      15_000,
      'the interrupted reply to be marked',
    );
    expect(fencesBalanced(expected)).toBe(true);
    // no later write of the dead reply went out, and it was not answered again
    expect(emu.requests.filter((r) => r.message === slow)).toHaveLength(1);

    // 4. The next message in the thread continues the same upstream conversation and is answered.
    fake.dispatchMessage({ channelId: thread, authorId: '300000000000000001', content: 'after restart' });
    await fake.waitUntil(
      () => fake.botMessages(thread).some((m) => m.content === echo('after restart')),
      15_000,
      'the reply after the restart',
    );
    const third = emu.requests.find((r) => r.message === 'after restart');
    expect(third?.conversationId).toBe(conversationId);
    // the thread holds: reply 1, the interrupted reply, reply 3 — nothing else
    const contents = fake.botMessages(thread).map((m) => m.content);
    expect(contents[0]).toBe(echo('hello one'));
    expect(contents.at(-1)).toBe(echo('after restart'));
    expect(contents.filter((c) => c.endsWith(MESSAGES.interrupted))).toHaveLength(1);
  }, 60_000);
});

describe('the same over Slack Socket Mode (edit streaming)', () => {
  let slack: FakeSlack;
  let slackBridge: BridgeChild | undefined;
  afterAll(async () => {
    await killHard(slackBridge);
    await slack?.close();
  });

  it('keeps the thread mapping, marks the half-written reply interrupted, answers the next message in the thread', async () => {
    slack = await startFakeSlack({ limits: {} });
    const slackEnv = slackBridgeEnv(slack, 'edit', 'slack');
    slackBridge = await spawnBridge(slackEnv);
    await slackBridge.waitReady();
    const texts = (ts: string) => slack.botMessages('C0CRASH', ts).map((m) => m.text);

    const first = slack.userPost({ channel: 'C0CRASH', text: `<@${slack.botUserId}> slack one` });
    await slack.sendEvent(first.mention as Record<string, unknown>);
    await waitFor(() => texts(first.ts).includes(echo('slack one')), 15_000, 'the first reply in the thread');
    const session = emu.requests.find((r) => r.message === 'slack one')?.conversationId;
    expect(session).toBeDefined(); // Form B: the bridge chose the session id

    const slow = 'slack slow [long 3000] [delay 30]';
    const second = slack.userPost({ channel: 'C0CRASH', text: slow, threadTs: first.ts });
    await slack.sendEvent(second.message);
    // Killed inside a code block: the rendering shows it closed, so the text ends with a fence.
    const half = await waitFor(
      () => {
        const m = slack.botMessages('C0CRASH', first.ts)[1];
        return m !== undefined && deepInCode(m.text.trimEnd().replace(/```$/, '')) ? m : undefined;
      },
      15_000,
      'the slow reply to be inside a code block',
    );
    expect(emu.requests.find((r) => r.message === slow)?.conversationId).toBe(session);
    slackBridge.kill('SIGKILL');
    await slackBridge.exited;
    const rec = await openRecord(slackEnv.DATABASE_PATH);
    expect(rec.messageIds.at(-1)).toBe(half.ts);
    expect(rec.upstreamId).toBe(session);
    expect(fencesBalanced(rec.lastText)).toBe(false);

    slackBridge = await spawnBridge(slackEnv);
    await slackBridge.waitReady();
    // the text so far, the code block closed, then the note, rendered for Slack
    const expected = mrkdwnOracle(`${rec.lastText}${closeFence(rec.lastText)}${MESSAGES.interrupted}`);
    await waitFor(
      () => slack.message('C0CRASH', half.ts)?.text === expected,
      15_000,
      'the interrupted reply to be marked',
    );
    expect(expected).toContain('_(reply interrupted)_');
    expect(emu.requests.filter((r) => r.message === slow)).toHaveLength(1);

    const third = slack.userPost({ channel: 'C0CRASH', text: 'slack after restart', threadTs: first.ts });
    await slack.sendEvent(third.message);
    await waitFor(() => texts(first.ts).includes(echo('slack after restart')), 15_000, 'the reply after the restart');
    expect(emu.requests.find((r) => r.message === 'slack after restart')?.conversationId).toBe(session);
    expect(texts(first.ts).filter((t) => t.includes('reply interrupted'))).toHaveLength(1);
  }, 60_000);
});

describe('a Slack native stream left open by a crash', () => {
  let slack: FakeSlack;
  let slackBridge: BridgeChild | undefined;
  afterAll(async () => {
    await killHard(slackBridge);
    await slack?.close();
  });

  it('is stopped and its text set to the text so far + the note after the restart; the thread goes on', async () => {
    slack = await startFakeSlack({ limits: {} });
    const nativeEnv = slackBridgeEnv(slack, 'native', 'native');
    slackBridge = await spawnBridge(nativeEnv);
    await slackBridge.waitReady();

    const slow = 'native slow [long 3000] [delay 30]';
    const top = slack.userPost({ channel: 'C0NATIVE', text: `<@${slack.botUserId}> ${slow}` });
    await slack.sendEvent(top.mention as Record<string, unknown>);
    const half = await waitFor(
      () => {
        const m = slack.botMessages('C0NATIVE', top.ts)[0];
        return m !== undefined && m.text.length > 400 ? m : undefined;
      },
      15_000,
      'the native stream to be under way',
    );
    expect(slack.calls.some((c) => c.method === 'chat.startStream')).toBe(true);
    const session = emu.requests.find((r) => r.message === slow)?.conversationId;
    slackBridge.kill('SIGKILL');
    await slackBridge.exited;
    const rec = await openRecord(nativeEnv.DATABASE_PATH);
    expect(rec.messageIds.at(-1)).toBe(half.ts);
    expect(rec.target.data?.mode).toBe('native');

    slackBridge = await spawnBridge(nativeEnv);
    await slackBridge.waitReady();
    const expected = markdownTextOracle(
      `${rec.lastText}${fencesBalanced(rec.lastText) ? '' : closeFence(rec.lastText)}${MESSAGES.interrupted}`,
    );
    await waitFor(
      () => slack.message('C0NATIVE', half.ts)?.text === expected,
      15_000,
      'the stream to be marked interrupted',
    );
    const stopped = slack.calls.filter((c) => c.method === 'chat.stopStream' && c.args.ts === half.ts);
    expect(stopped.length).toBeGreaterThan(0);
    expect(slack.message('C0NATIVE', half.ts)?.streaming).toBeFalsy();

    const next = slack.userPost({ channel: 'C0NATIVE', text: 'native after restart', threadTs: top.ts });
    await slack.sendEvent(next.message);
    await waitFor(
      () => slack.botMessages('C0NATIVE', top.ts).some((m) => m.text.includes('You said: native after restart')),
      15_000,
      'the reply after the restart',
    );
    expect(emu.requests.find((r) => r.message === 'native after restart')?.conversationId).toBe(session);
  }, 60_000);
});
