import { afterEach, expect, it } from 'vitest';
import type { ContextMessage } from '../../src/core/chat-port.js';
import { mention } from './discord/harness.js';
import { type Stack, startStack } from './discord/stack.js';

// Discord's side of "context is the newest messages whatever the platform caps": a thread's
// messages the gateway delivered are recorded, so a mention at the end of a 40-message thread
// whose history read Discord refuses (429) still sends the upstream the 30 messages just before it.

let d: Stack | undefined;
afterEach(async () => {
  await d?.close();
  d = undefined;
});

const ANN = '200000000000000001';
const BOB = '200000000000000002';

it('a refused history read: the context is the thread’s last messages, from the record', async () => {
  d = await startStack({ relaySettings: { context: { mode: 'metadata', maxMessages: 30, maxChars: 6000 } } });
  const { fake, channelId } = d;
  fake.state.users.set(BOB, { id: BOB, username: 'Bob', bot: false });
  const threadId = fake.addThread(channelId, BOB, 'planning');
  for (let i = 1; i <= 40; i++) fake.dispatchMessage({ channelId: threadId, authorId: BOB, content: `step ${i}` });
  fake.limits.armShared('GET', new RegExp(`/channels/${threadId}/messages`), 60_000);
  fake.dispatchMessage({ channelId: threadId, authorId: ANN, content: mention(fake, 'sum it up'), mentionsBot: true });
  await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content.startsWith('You said:')));
  const [req] = d.emu.requests.filter((r) => r.endpoint === 'stream' || r.endpoint === 'send');
  const ctx = (req?.metadata as { context?: ContextMessage[] }).context ?? [];
  expect(ctx.map((m) => m.text)).toEqual(Array.from({ length: 30 }, (_, k) => `step ${k + 11}`));
  expect(ctx[0]?.author).toBe('Bob');
  expect(fake.limits.refused.map((r) => r.method)).toEqual(['GET']);
});
