import { describe, expect, it } from 'vitest';
import { AGENT_FILE_TEXT, AGENT_IMAGE, AGENT_REASONING } from '../../src/emulator/agent-replies.js';
import * as agent from '../support/emulator-agent.js';
import { type Stack, type StackOptions, stackPerTest } from './discord/stack.js';

// An agent's reply on Discord end to end: fake Discord ⇄ discord.js ⇄ relay ⇄ the REAL upstream
// client ⇄ the emulator answering `[agent]` in each agent protocol (and the seed's named events):
// two tool calls, reasoning, the answer, two sources, an image and a small CSV file. Each running
// step shows as a `-#` line; the final message is the answer exactly (no reasoning, arguments or
// tool output) with the sources as links, the image as an embed and the CSV attached.

const start = stackPerTest();

async function ask(text: string, opts: StackOptions = {}) {
  const s = await start({ chunkDelayMs: 2, ...opts });
  const { fake } = s;
  const { threadId } = s.ask(text);
  const replies = () => fake.botMessages(threadId).filter((m) => !m.ephemeral);
  const answer = `You said: ${text}`;
  return { stack: s, fake, threadId, replies, answer };
}

/** Every text the bot wrote in the test (creates and edits). */
const written = (stack: Stack) => stack.fake.record.map((w) => w.content ?? '');

function expectNoLeak(stack: Stack): void {
  const all = JSON.stringify(written(stack));
  expect(all).not.toContain(AGENT_REASONING.slice(0, 20));
  expect(all).not.toContain('{');
}

describe.each(agent.PROTOCOLS)('protocol %s', (protocol) => {
  it('each step as a -# line while it runs; the answer and sources exactly; the image embedded, the file attached', async () => {
    const { stack, fake, replies, answer } = await ask(agent.ask(protocol));
    await fake.waitUntil(
      () => replies()[0]?.content === answer + agent.SOURCES_MD,
      20_000,
      'the answer with its sources',
    );
    await fake.waitUntil(() => (replies()[0]?.files.length ?? 0) > 0, 20_000, 'the file');
    expect(replies()).toHaveLength(1);
    const [reply] = replies();
    for (const title of agent.stepTitles(protocol)) expect(written(stack)).toContain(`-# ${title}…`);
    expect(reply?.content).not.toContain('-#');
    expect(reply?.embeds).toEqual([expect.objectContaining({ image: { url: AGENT_IMAGE.url } })]);
    expect(reply?.files.map((f) => [f.filename, Buffer.from(f.bytes).toString()])).toEqual([
      [agent.fileName(protocol), AGENT_FILE_TEXT],
    ]);
    expectNoLeak(stack);
  });

  it('SHOW_STEPS=off: no step line is ever written; the answer and sources only', async () => {
    const { stack, fake, replies, answer } = await ask(agent.ask(protocol), { relaySettings: { showSteps: false } });
    await fake.waitUntil(
      () => replies()[0]?.content === answer + agent.SOURCES_MD,
      20_000,
      'the answer with its sources',
    );
    expect(replies()).toHaveLength(1);
    expect(written(stack).filter((c) => c.includes('-#'))).toEqual([]);
    expectNoLeak(stack);
  });
});

it('a file over REPLY_FILE_MAX_BYTES is not attached but named in a line', async () => {
  const { fake, replies, answer } = await ask('[file]', { maxFileBytes: 16 });
  const named = `${answer}\n\n📎 table.csv (${AGENT_FILE_TEXT.length} B) (not attached)`;
  await fake.waitUntil(() => replies()[0]?.content === named, 20_000, 'the file named');
  expect(replies()[0]?.files).toEqual([]);
});
