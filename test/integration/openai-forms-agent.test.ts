import { afterEach, describe, expect, it } from 'vitest';
import { renderMrkdwn } from '../../src/connectors/slack/render.js';
import { AGENT_REASONING, AGENT_TOOLS } from '../../src/emulator/agent-replies.js';
import type { Emulator } from '../../src/emulator/index.js';
import { shownMessage } from '../fakes/slack/shown.js';
import { type Stack, startStack } from './discord/stack.js';
import { type SlackStack, startSlackStack } from './slack-stack.js';

// An agent behind an OpenAI-compatible server (issue 40 with "the assistant at work"): the
// emulator speaks Chat Completions or Responses with an agent's work in that protocol's own
// events (`[agent]`: reasoning, two function calls with their arguments and outputs, the text,
// two URL citations, an image and a file). Through the real Slack (Bolt) and Discord (discord.js)
// paths: the running step shows while the reply is at work, the answer is exactly the text with
// its sources, and no write ever carries a tool's arguments or output, or the reasoning.

let slack: SlackStack | undefined;
let discord: Stack | undefined;
afterEach(async () => {
  await slack?.close();
  await discord?.close();
  slack = undefined;
  discord = undefined;
});

/** Half a second between frames: the bridge (editing every 100 ms) shows each step while it runs. */
const ASK = 'weather? [agent] [delay 500]';
const ANSWER =
  `You said: ${ASK}\n\n**Sources**\n` +
  '1. [Streaming replies](<https://example.com/docs/streaming>)\n' +
  '2. [Weather in Paris](<https://example.org/weather/paris>)';
const RUNNING = new Set(AGENT_TOOLS.map((t) => `${t.name}…`));
/**
 * What must never be written, found at any level of JSON escaping: words of the tools' arguments
 * (`{"query":"streaming replies"}`, `{"city":"Paris"}`) and of the reasoning.
 */
const SECRETS = ['streaming replies', 'city', AGENT_REASONING.split(';')[0] ?? AGENT_REASONING];
/** The tools' output, never in a message's text. */
const TOOL_OUTPUT = '{"ok":true}';

const PATHS = { 'chat-completions': '/v1/chat/completions', responses: '/v1/responses' } as const;

/** The emulator answered in the form's own protocol (not Form A/B): the turn went where it should. */
function expectForm(emu: Emulator, form: keyof typeof PATHS): void {
  const turn = emu.requests.find((r) => r.endpoint === 'stream');
  expect(turn).toMatchObject({ form, path: PATHS[form] });
}

for (const form of ['chat-completions', 'responses'] as const) {
  describe(`CHAT_API_FORM=${form}: an agent's work`, () => {
    it('Slack mention: the running step while at work, then exactly the answer with its sources', async () => {
      slack = await startSlackStack({ form, streaming: 'edit' });
      const { fake } = slack;
      const post = fake.userPost({ channel: 'C1', text: `<@U0BOT> ${ASK}`, user: 'U0ANN' });
      await fake.sendEvent(post.mention ?? {});
      await slack.settled(1);
      const replies = fake.botMessages('C1', post.ts);
      expect(replies).toHaveLength(1);
      expect(replies[0]?.text).toBe(renderMrkdwn(ANSWER));
      expect(shownMessage(replies[0])).not.toMatch(/search_docs|get_weather/);

      const writes = fake.calls.filter((c) => c.method === 'chat.postMessage' || c.method === 'chat.update');
      const texts = writes.map((c) => String(c.args.text ?? ''));
      const firstStep = texts.findIndex((t) => RUNNING.has(t));
      const firstAnswer = texts.findIndex((t) => t.startsWith('You said'));
      expect(firstStep).toBeGreaterThanOrEqual(0);
      expect(firstStep).toBeLessThan(firstAnswer);
      const written = JSON.stringify(writes.map((c) => c.args));
      for (const secret of SECRETS) expect(written).not.toContain(secret);
      for (const t of texts) expect(t).not.toContain(TOOL_OUTPUT);
      expectForm(slack.emu, form);
    }, 60_000);

    it('Discord mention: the running step as a -# line while at work, then exactly the answer with its sources', async () => {
      discord = await startStack({ form });
      const { fake } = discord;
      const { threadId } = discord.ask(ASK);
      const replies = () => fake.botMessages(threadId).filter((m) => !m.ephemeral);
      await fake.waitUntil(() => replies().find((m) => m.content === ANSWER), 30_000, 'the answer with its sources');
      expect(replies().filter((m) => m.content !== '')).toHaveLength(1);
      const reply = replies().find((m) => m.content === ANSWER);

      const texts = fake.record.filter((w) => w.messageId === reply?.id).map((w) => w.content ?? '');
      const firstStep = texts.findIndex((t) => t.startsWith('-# ') && RUNNING.has(t.slice(3)));
      const firstAnswer = texts.findIndex((t) => t.startsWith('You said'));
      expect(firstStep).toBeGreaterThanOrEqual(0);
      expect(firstStep).toBeLessThan(firstAnswer);
      const written = JSON.stringify(fake.record);
      for (const secret of SECRETS) expect(written).not.toContain(secret);
      for (const w of fake.record) expect(w.content ?? '').not.toContain(TOOL_OUTPUT);
      expectForm(discord.emu, form);
    }, 60_000);
  });
}
