import { afterEach, expect, it } from 'vitest';
import { type SlackStack, startSlackStack } from './slack-stack.js';

// JSON behind a preamble, end to end: the upstream (emulator, `json-preamble`) answers
// `application/json` whose first line is `)]}'`, then one JSON object a line. What the user sees
// in the fake Slack, in every version of every message, is the reply text and nothing of the
// stream's syntax.

let s: SlackStack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

it.each(['a', 'b'] as const)('Form %s: the preamble is dropped and only the deltas are shown', async (form) => {
  s = await startSlackStack({ form, chunkDelayMs: 2 });
  s.emu.setOptions({ streamFormat: 'json-preamble' });
  const { fake } = s;
  const question = 'tell me about preambles, in a few pieces [chunks 6]';
  await fake.sendEvent(fake.userPost({ channel: 'D1', text: question, user: 'U0ANN' }).message);
  const [result] = await s.settled(1);
  expect(result?.status).toBe('answered');
  const messages = fake.agent.replies('D1');
  expect(messages.map((m) => m.text)).toEqual([`You said: ${question}`]);
  const everything = messages.flatMap((m) => m.versions.map((v) => JSON.stringify(v)));
  for (const syntax of [")]}'", '\\"delta\\"', '{\\"done', 'conversation_id', 'session_id']) {
    expect(everything.filter((v) => v.includes(syntax))).toEqual([]);
  }
});
