import { afterEach, expect, it } from 'vitest';
import { renderMrkdwn } from '../../src/connectors/slack/render.js';
import { gate, type ScriptedEvent, scriptedChat, weatherAgentReply } from '../fakes/fake-chat.js';
import { shownMessage } from '../fakes/slack/shown.js';
import type { FakeSlack } from '../fakes/slack/index.js';
import { type SlackStack, type SlackStackOptions, startSlackStack } from './slack-stack.js';

// An agent's reply on Slack, through Bolt against the fake Slack and the real relay, writer and
// sinks, the upstream a scripted agent stream. Native streams: the steps as a task timeline
// (in progress, then complete) and the assistant status naming the running step; edit mode: a
// context line naming the running step while it runs, gone at the end. Both: the answer exactly,
// no step in it, the sources as a numbered list of links, no previews; an image URL as an image.

let s: SlackStack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const ANSWER_MD =
  'Hello world.\n\n**Sources**\n1. [Example A](<https://example.com/a>)\n2. [b.example.org](<https://b.example.org/x>)';
/** As Slack's Markdown gets it (native streams): link destinations without the angle brackets. */
const ANSWER_NATIVE =
  'Hello world.\n\n**Sources**\n1. [Example A](https://example.com/a)\n2. [b.example.org](https://b.example.org/x)';

async function stack(events: ScriptedEvent[], opts: SlackStackOptions): Promise<SlackStack> {
  s = await startSlackStack({ ...opts, chat: scriptedChat(events) });
  return s;
}

/** A question in an assistant DM thread (native streams); the reply's thread. */
async function askInDm(fake: FakeSlack): Promise<string> {
  const root = fake.userPost({ channel: 'D1', text: 'thread root' });
  await fake.sendEvent(fake.userPost({ channel: 'D1', text: 'weather?', threadTs: root.ts }).message);
  return root.ts;
}

/** A mention in a channel (edit mode); the reply's thread. */
async function askInChannel(fake: FakeSlack): Promise<string> {
  const post = fake.userPost({ channel: 'C1', text: '<@U0BOT> weather?', user: 'U0ANN' });
  await fake.sendEvent(post.mention ?? {});
  return post.ts;
}

const writesOf = (fake: FakeSlack) =>
  fake.calls.filter((c) => /^chat\.(postMessage|update|startStream|appendStream|stopStream)$/.test(c.method));

it('native stream: the steps as a task timeline while the tool runs, the status naming the step; the answer and sources exactly', async () => {
  const tool = gate();
  const { fake } = await stack(weatherAgentReply(tool.promise), { streaming: 'auto' });
  const thread = await askInDm(fake);
  const timeline = () => fake.botMessages('D1', thread)[0]?.timeline?.tasks;
  await expect.poll(timeline, { timeout: 10_000 }).toEqual([
    { id: 'c1', title: 'Searching the web', status: 'complete' },
    { id: 'c2', title: 'get_weather', status: 'in_progress' },
  ]);
  // No answer text yet, and none of the steps' words in the message's text.
  expect(fake.botMessages('D1', thread)[0]?.text).toBe('');
  expect(fake.botMessages('D1', thread)[0]?.taskDisplayMode).toBe('timeline');
  // The assistant status named the running step (set once the status showed, before it cleared).
  const statuses = () =>
    fake.calls.filter((c) => c.method === 'assistant.threads.setStatus').map((c) => String(c.args.status));
  await expect.poll(statuses, { timeout: 10_000 }).toContain('get_weather…');
  tool.open();
  await s?.settled(1);
  const [reply, ...more] = fake.botMessages('D1', thread);
  expect(more).toHaveLength(0);
  expect(reply?.text).toBe(ANSWER_NATIVE);
  expect(reply?.streaming).toBe(false);
  expect(reply?.timeline?.tasks.map((t) => t.status)).toEqual(['complete', 'complete']);
  // The timeline went running → done: every task's updates in order.
  expect(reply?.timeline?.updates.filter((u) => u.id === 'c2').map((u) => u.status)).toEqual([
    'in_progress',
    'complete',
  ]);
});

it('edit mode: one context line naming the running step while it runs, gone at the end; no previews', async () => {
  const tool = gate();
  const { fake } = await stack(weatherAgentReply(tool.promise), { streaming: 'edit' });
  const thread = await askInChannel(fake);
  const reply = () => fake.botMessages('C1', thread)[0];
  await expect.poll(() => shownMessage(reply()), { timeout: 10_000 }).toContain('_get_weather…_');
  expect(reply()?.blocks?.some((b) => b.type === 'context')).toBe(true);
  tool.open();
  await s?.settled(1);
  expect(fake.botMessages('C1', thread)).toHaveLength(1);
  expect(reply()?.text).toBe(renderMrkdwn(ANSWER_MD));
  expect(shownMessage(reply())).not.toContain('get_weather');
  expect(reply()?.blocks?.some((b) => b.type === 'context')).toBe(false);
  expect(reply()?.text).toContain('<https://example.com/a|Example A>');
  const posts = fake.calls.filter((c) => c.method === 'chat.postMessage' && c.args.channel === 'C1');
  expect(posts.length).toBeGreaterThan(0);
  for (const p of posts) expect([String(p.args.unfurl_links), String(p.args.unfurl_media)]).toEqual(['false', 'false']);
});

it('SHOW_STEPS=off: no step is ever written (no task, no context line); the answer and sources only', async () => {
  const tool = gate();
  tool.open();
  const { fake } = await stack(weatherAgentReply(tool.promise), {
    streaming: 'auto',
    relaySettings: { showSteps: false },
  });
  const thread = await askInDm(fake);
  await s?.settled(1);
  expect(fake.botMessages('D1', thread).map((m) => m.text)).toEqual([ANSWER_NATIVE]);
  const written = JSON.stringify(writesOf(fake).map((c) => c.args));
  expect(written).not.toContain('task_update');
  expect(written).not.toContain('get_weather');
  const statuses = fake.calls.filter((c) => c.method === 'assistant.threads.setStatus').map((c) => c.args.status);
  expect(statuses).not.toContain('get_weather…');
});

it('SHOW_SOURCES=off in edit mode: the answer alone', async () => {
  const tool = gate();
  tool.open();
  const { fake } = await stack(weatherAgentReply(tool.promise), {
    streaming: 'edit',
    relaySettings: { showSources: false },
  });
  const thread = await askInChannel(fake);
  await s?.settled(1);
  expect(fake.botMessages('C1', thread).map((m) => m.text)).toEqual(['Hello world.']);
});

it('an image URL shows as an image block, native and edit mode', async () => {
  const events: ScriptedEvent[] = [
    { type: 'text', text: 'Here is the chart.' },
    { type: 'file', file: { name: 'chart.png', mime: 'image/png', url: 'https://cdn.example.com/chart.png' } },
  ];
  const image = { type: 'image', image_url: 'https://cdn.example.com/chart.png', alt_text: 'chart.png' };
  const { fake } = await stack(events, { streaming: 'auto' });
  const dm = await askInDm(fake);
  const channel = await askInChannel(fake);
  await s?.settled(2);
  const native = fake.botMessages('D1', dm)[0];
  expect(native?.text).toBe('Here is the chart.');
  expect(native?.blocks).toContainEqual(image);
  const edited = fake.botMessages('C1', channel)[0];
  expect(shownMessage(edited)).toContain('[image: chart.png]');
  expect(edited?.blocks).toContainEqual(image);
});

it('a file sent as bytes is uploaded into the thread (external upload flow); a refused upload is named in a line', async () => {
  const bytes = new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x2d, 0x31]);
  const events: ScriptedEvent[] = [
    { type: 'text', text: 'Your report.' },
    { type: 'file', file: { name: 'report.pdf', mime: 'application/pdf', size: bytes.length, data: bytes } },
  ];
  const { fake } = await stack(events, { streaming: 'auto' });
  const dm = await askInDm(fake);
  const channel = await askInChannel(fake);
  await s?.settled(2);
  expect(fake.botMessages('D1', dm)[0]?.text).toBe('Your report.');
  expect(fake.botMessages('C1', channel)[0]?.text).toBe('Your report.');
  const uploaded = fake.uploads.completed.map((u) => ({ ...u, bytes: [...u.bytes] }));
  expect(uploaded).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ filename: 'report.pdf', channel: 'D1', threadTs: dm, bytes: [...bytes] }),
      expect.objectContaining({ filename: 'report.pdf', channel: 'C1', threadTs: channel, bytes: [...bytes] }),
    ]),
  );
  expect(fake.uploads.completed).toHaveLength(2);

  fake.uploads.refuse = 'missing_scope';
  const again = await askInChannel(fake);
  await s?.settled(3);
  expect(fake.botMessages('C1', again)[0]?.text).toBe(
    renderMrkdwn('Your report.\n\n📎 report.pdf (6 B) (not attached)'),
  );
  expect(fake.uploads.completed).toHaveLength(2);
});
