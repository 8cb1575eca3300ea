import { afterEach, describe, expect, it } from 'vitest';
import { renderMrkdwn } from '../../src/connectors/slack/render.js';
import { AGENT_FILE_TEXT, AGENT_IMAGE, AGENT_REASONING, AGENT_TOOLS } from '../../src/emulator/agent-replies.js';
import * as agent from '../support/emulator-agent.js';
import { shownMessage } from '../fakes/slack/shown.js';
import type { FakeSlack } from '../fakes/slack/index.js';
import { type SlackStack, type SlackStackOptions, startSlackStack } from './slack-stack.js';

// An agent's reply on Slack end to end: fake Slack ⇄ Bolt ⇄ relay ⇄ the REAL upstream client ⇄
// the emulator answering `[agent]` in each agent protocol (and the seed's named events): two tool
// calls, reasoning, the answer, two sources, an image and a small CSV file. Native streams show
// each step as a task in progress, edit mode as a context line naming it; the final message is
// the answer exactly (no reasoning, arguments or tool output) and the sources as links.

let s: SlackStack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const SOURCES_NATIVE =
  '\n\n**Sources**\n1. [Streaming replies](https://example.com/docs/streaming)\n2. [Weather in Paris](https://example.org/weather/paris)';
const STEP_IDS = AGENT_TOOLS.map((t) => t.id);
// AI SDK's `file` part carries no name: its image is named from its URL (and the CSV by its type).
const IMAGE = expect.objectContaining({ type: 'image', image_url: AGENT_IMAGE.url });

async function ask(fake: FakeSlack, native: boolean, text: string): Promise<{ channel: string; thread: string }> {
  if (native) {
    const root = fake.userPost({ channel: 'D1', text: 'thread root' });
    await fake.sendEvent(fake.userPost({ channel: 'D1', text, threadTs: root.ts }).message);
    return { channel: 'D1', thread: root.ts };
  }
  const post = fake.userPost({ channel: 'C1', text: `<@U0BOT> ${text}`, user: 'U0ANN' });
  await fake.sendEvent(post.mention ?? {});
  return { channel: 'C1', thread: post.ts };
}

const writes = (fake: FakeSlack) =>
  fake.calls.filter((c) => /^chat\.(postMessage|update|startStream|appendStream|stopStream)$/.test(c.method));

/** Nothing of the agent's inner stream in any write: no reasoning, no tool arguments or output. */
function expectNoLeak(fake: FakeSlack): void {
  const written = JSON.stringify(writes(fake).map((c) => c.args));
  expect(written).not.toContain(AGENT_REASONING.slice(0, 20));
  expect(written).not.toContain('streaming replies"');
  expect(written).not.toContain('Paris\\"');
  expect(written).not.toContain('\\"ok\\":true');
}

async function start(opts: SlackStackOptions): Promise<SlackStack> {
  s = await startSlackStack({ chunkDelayMs: 2, ...opts });
  return s;
}

const answerOf = (stack: SlackStack) => `You said: ${String(stack.chatRequests()[0]?.message)}`;

describe.each(agent.PROTOCOLS)('protocol %s', (protocol) => {
  it('native stream: each step as a running task, then the answer and sources exactly; image block; the file uploaded', async () => {
    const stack = await start({ streaming: 'auto' });
    const { fake } = stack;
    const { channel, thread } = await ask(fake, true, agent.ask(protocol));
    await stack.settled(1);
    const [reply, ...more] = fake.botMessages(channel, thread);
    expect(more).toHaveLength(0);
    expect(reply?.text).toBe(answerOf(stack) + SOURCES_NATIVE);
    // Each step was shown running, then done.
    for (const id of STEP_IDS)
      expect(reply?.timeline?.updates.filter((u) => u.id === id).map((u) => u.status)).toEqual([
        'in_progress',
        'complete',
      ]);
    expect(reply?.blocks).toContainEqual(IMAGE);
    expect(
      fake.uploads.completed.map((u) => [u.filename, u.channel, u.threadTs, Buffer.from(u.bytes).toString()]),
    ).toEqual([[agent.fileName(protocol), channel, thread, AGENT_FILE_TEXT]]);
    expectNoLeak(fake);
  });

  it('edit mode: a context line naming each running step, gone at the end; the answer and sources exactly', async () => {
    const stack = await start({ streaming: 'edit' });
    const { fake } = stack;
    const { channel, thread } = await ask(fake, false, agent.ask(protocol));
    await stack.settled(1);
    const [reply, ...more] = fake.botMessages(channel, thread);
    expect(more).toHaveLength(0);
    expect(reply?.text).toBe(renderMrkdwn(answerOf(stack) + agent.SOURCES_MD));
    expect(reply?.blocks?.some((b) => b.type === 'context')).toBe(false);
    expect(reply?.blocks).toContainEqual(IMAGE);
    // Each step's running line was written (a context block naming it, with the ellipsis).
    const contexts = writes(fake).map((c) => String(c.args.blocks ?? ''));
    for (const title of agent.stepTitles(protocol))
      expect(contexts.some((b) => b.includes('"context"') && b.includes(`_${title}…_`))).toBe(true);
    for (const title of agent.stepTitles(protocol)) expect(shownMessage(reply)).not.toContain(title);
    expect(fake.uploads.completed.map((u) => u.filename)).toEqual([agent.fileName(protocol)]);
    expectNoLeak(fake);
  });

  it('SHOW_STEPS=off: no step is written (native or edit mode); the answer and sources only', async () => {
    const stack = await start({ streaming: 'auto', relaySettings: { showSteps: false } });
    const { fake } = stack;
    const dm = await ask(fake, true, agent.ask(protocol));
    const ch = await ask(fake, false, agent.ask(protocol));
    await stack.settled(2);
    expect(fake.botMessages(dm.channel, dm.thread).map((m) => m.text)).toEqual([answerOf(stack) + SOURCES_NATIVE]);
    expect(fake.botMessages(ch.channel, ch.thread).map((m) => m.text)).toEqual([
      renderMrkdwn(answerOf(stack) + agent.SOURCES_MD),
    ]);
    const written = JSON.stringify(writes(fake).map((c) => c.args));
    expect(written).not.toContain('task_update');
    expect(written).not.toContain('context');
    for (const title of agent.stepTitles(protocol)) expect(written).not.toContain(title);
    expectNoLeak(fake);
  });
});

it('a file over REPLY_FILE_MAX_BYTES is not uploaded but named in a line (native and edit mode)', async () => {
  const stack = await start({ streaming: 'auto', maxFileBytes: 16 });
  const { fake } = stack;
  const dm = await ask(fake, true, '[file]');
  const ch = await ask(fake, false, '[file]');
  await stack.settled(2);
  const line = `\n\n📎 table.csv (${AGENT_FILE_TEXT.length} B) (not attached)`;
  expect(fake.botMessages(dm.channel, dm.thread)[0]?.text).toBe('You said: [file]' + line);
  expect(fake.botMessages(ch.channel, ch.thread)[0]?.text).toBe(renderMrkdwn('You said: [file]' + line));
  expect(fake.uploads.completed).toEqual([]);
});
