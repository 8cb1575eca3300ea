import { expect, it } from 'vitest';
import type { ContextMessage } from '../../src/core/chat-port.js';
import { BOB, stackPerTest } from './discord/stack.js';

// Discord's side of "context is the newest messages whatever the platform caps": a thread's
// messages the gateway delivered are recorded, so a mention at the end of a 40-message thread
// whose history read Discord refuses (429) still sends the upstream the 30 messages just before it.

const start = stackPerTest();

it('a refused history read: the context is the thread’s last messages, from the record', async () => {
  const d = await start({ relaySettings: { context: { mode: 'metadata', maxMessages: 30, maxChars: 6000 } } });
  const { fake, channelId } = d;
  fake.state.users.set(BOB, { id: BOB, username: 'Bob', bot: false });
  const threadId = fake.addThread(channelId, BOB, 'planning');
  for (let i = 1; i <= 40; i++) fake.dispatchMessage({ channelId: threadId, authorId: BOB, content: `step ${i}` });
  fake.limits.armShared('GET', new RegExp(`/channels/${threadId}/messages`), 60_000);
  d.ask('sum it up', { channelId: threadId });
  await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content.startsWith('You said:')));
  const [req] = d.chatRequests();
  const ctx = (req?.metadata as { context?: ContextMessage[] }).context ?? [];
  expect(ctx.map((m) => m.text)).toEqual(Array.from({ length: 30 }, (_, k) => `step ${k + 11}`));
  expect(ctx[0]?.author).toBe('Bob');
  expect(fake.limits.refused.map((r) => r.method)).toEqual(['GET']);
});
