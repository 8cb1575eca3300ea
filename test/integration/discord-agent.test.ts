import { expect, it } from 'vitest';
import { FakeChat, gate, type ScriptedEvent, scriptedChat, weatherAgentReply } from '../fakes/fake-chat.js';
import { type StackOptions, stackPerTest } from './discord/stack.js';

// An agent's reply on Discord, through real discord.js against the fake Discord and the real
// relay, writer and sink, the upstream a scripted agent stream: the running step as a `-#` line
// while its tool runs, edited in place and gone at the end; the answer exactly; the sources as a
// numbered list of links Discord shows without previews; an image URL as an embed image.

const start = stackPerTest();

const ANSWER =
  'Hello world.\n\n**Sources**\n1. [Example A](<https://example.com/a>)\n2. [b.example.org](<https://b.example.org/x>)';

async function ask(events: ScriptedEvent[], opts: StackOptions = {}) {
  const stack = await start({ ...opts, chat: scriptedChat(events) });
  const { fake } = stack;
  const { threadId } = stack.ask('weather?');
  const replies = () => fake.botMessages(threadId).filter((m) => !m.ephemeral);
  return { stack, fake, threadId, replies };
}

it('the running step shows as a -# line while its tool runs; the answer and its sources replace it', async () => {
  const tool = gate();
  const { fake, replies } = await ask(weatherAgentReply(tool.promise));
  await fake.waitUntil(() => replies()[0]?.content === '-# get_weather…', 10_000, 'the step line');
  tool.open();
  await fake.waitUntil(() => replies()[0]?.content === ANSWER, 10_000, 'the answer with its sources');
  expect(replies()).toHaveLength(1);
  const [reply] = replies();
  // Edited in place: the step line's message became the answer.
  expect(reply?.edits).toBeGreaterThanOrEqual(1);
  expect(reply?.content).not.toContain('-#');
  expect(reply?.embeds).toEqual([]);
  // No write of the reply ever pinged anyone or carried a tool's arguments (there were none to leak).
  const written = fake.record.filter((w) => w.messageId === reply?.id).map((w) => w.content ?? '');
  expect(written.every((c) => !c.includes('{'))).toBe(true);
});

it('SHOW_STEPS=off: no step line is ever written; the answer and its sources only', async () => {
  const tool = gate();
  tool.open();
  const { fake, replies } = await ask(weatherAgentReply(tool.promise), { relaySettings: { showSteps: false } });
  await fake.waitUntil(() => replies()[0]?.content === ANSWER, 10_000, 'the answer with its sources');
  const ids = new Set(replies().map((m) => m.id));
  expect(
    fake.record.filter((w) => w.messageId !== undefined && ids.has(w.messageId)).map((w) => w.content),
  ).not.toContainEqual(expect.stringContaining('-#'));
  expect(replies()).toHaveLength(1);
});

it('SHOW_SOURCES=off: the answer alone', async () => {
  const tool = gate();
  tool.open();
  const { fake, replies } = await ask(weatherAgentReply(tool.promise), { relaySettings: { showSources: false } });
  await fake.waitUntil(() => replies()[0]?.content === 'Hello world.', 10_000, 'the answer');
  expect(replies()).toHaveLength(1);
});

it('an image URL shows as an embed image on the answer; another file as a line naming it', async () => {
  const events: ScriptedEvent[] = [
    { type: 'text', text: 'Here is the chart.' },
    { type: 'file', file: { name: 'chart.png', mime: 'image/png', url: 'https://cdn.example.com/chart.png' } },
    { type: 'file', file: { name: 'notes.txt', mime: 'text/plain', url: 'https://cdn.example.com/notes.txt' } },
  ];
  const { fake, replies } = await ask(events);
  const want = 'Here is the chart.\n\n📎 [notes.txt](<https://cdn.example.com/notes.txt>)';
  await fake.waitUntil(() => replies()[0]?.content === want, 10_000, 'the answer');
  await fake.waitUntil(() => (replies()[0]?.embeds.length ?? 0) > 0, 10_000, 'the image');
  expect(replies()[0]?.embeds).toEqual([{ image: { url: 'https://cdn.example.com/chart.png' }, title: 'chart.png' }]);
});

it('a file sent as bytes arrives as an attachment (multipart); one Discord refuses as too large is named in a line', async () => {
  const bytes = new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x2d, 0x31]);
  const big = new Uint8Array(10 * 1024 * 1024 + 1);
  let n = 0;
  const chat = new FakeChat('b');
  chat.script = () => ({
    events: [
      { type: 'text', text: 'Your report.' },
      n++ === 0
        ? { type: 'file', file: { name: 'report.pdf', mime: 'application/pdf', size: bytes.length, data: bytes } }
        : { type: 'file', file: { name: 'huge.bin', size: big.length, data: big } },
    ],
  });
  const s = await start({ chat });
  const { fake } = s;
  const first = s.ask('report?');
  const reply1 = () => fake.botMessages(first.threadId)[0];
  await fake.waitUntil(() => (reply1()?.files.length ?? 0) > 0, 10_000, 'the attachment');
  expect(reply1()?.content).toBe('Your report.');
  expect(reply1()?.files).toEqual([{ filename: 'report.pdf', bytes: [...bytes] }]);

  const second = s.ask('all of it');
  const reply2 = () => fake.botMessages(second.threadId)[0];
  const named = 'Your report.\n\n📎 huge.bin (10.0 MB) (not attached)';
  await fake.waitUntil(() => reply2()?.content === named, 10_000, 'the file named');
  expect(reply2()?.files).toEqual([]);
});
