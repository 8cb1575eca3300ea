import { describe, expect, it } from 'vitest';
import { longMarkdown } from '../../src/emulator/replies.js';
import type { LostAnswer } from '../fakes/chaos.js';
import { loseNth } from '../fakes/lost-answers.js';
import { partsProblems } from './discord/parts.js';
import { ANN, replyEnded, stackPerTest } from './discord/stack.js';

// A Discord write that took effect and whose answer was lost (the connection cut, or a 5xx that
// discord.js itself retries): through the real discord.js, for every write kind, the user sees ONE
// exact, final reply. Creates carry an enforced nonce (the fake returns the first message for a
// repeat); an interaction follow-up, which takes none, is found before another is made.

const start = stackPerTest();

const Q = 'please explain lost answers and writes that may have happened, in some words';

async function mentionReply(plan: Record<string, number[]>, how: LostAnswer, content = Q) {
  const faults = loseNth(plan, how);
  const s = await start({ chunkDelayMs: 10, fake: { chaos: faults } });
  return { faults, fake: s.fake, threadId: s.ask(content).threadId };
}

describe.each<LostAnswer>(['cut', '5xx'])('answer lost (%s) after the write took effect', (how) => {
  it('message create: the repeat carries the same nonce and gets the first message back', async () => {
    const { faults, fake, threadId } = await mentionReply({ create: [1] }, how);
    await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === `You said: ${Q}` && replyEnded(m)));
    expect(faults.lost).toEqual(['create#1']);
    expect(fake.botMessages(threadId)).toHaveLength(1);
    const creates = fake.record.filter((w) => w.method === 'POST' && /\/messages$/.test(w.path));
    expect(creates.length).toBeGreaterThanOrEqual(2);
    expect(new Set(creates.map((w) => w.nonce)).size).toBe(1);
    expect(creates.every((w) => typeof w.nonce === 'string' && w.enforceNonce === true)).toBe(true);
  });

  it('message edit: repeated as it is', async () => {
    const { faults, fake, threadId } = await mentionReply({ edit: [1] }, how);
    await fake.waitUntil(() => fake.botMessages(threadId).find((m) => m.content === `You said: ${Q}` && replyEnded(m)));
    expect(faults.lost).toEqual(['edit#1']);
    expect(fake.botMessages(threadId)).toHaveLength(1);
  });

  it('a continuation create lost: every part once, exact', async () => {
    const { faults, fake, threadId } = await mentionReply({ create: [2] }, how, 'give me [long 5200]');
    const expected = longMarkdown(5200);
    const parts = await fake.waitUntil(
      () => {
        const msgs = fake.botMessages(threadId);
        const texts = msgs.map((m) => m.content);
        return msgs.every(replyEnded) && partsProblems(texts, expected).length === 0 ? texts : undefined;
      },
      20_000,
      'the complete long reply',
    );
    expect(faults.lost).toEqual(['create#2']);
    // One nonce per part: distinct parts were made, none twice.
    const nonces = fake.record.filter((w) => w.method === 'POST' && /\/messages$/.test(w.path)).map((w) => w.nonce);
    expect(new Set(nonces).size).toBe(parts.length);
  });

  it('/ask: a follow-up whose answer was lost is found and continued, not sent twice', async () => {
    const faults = loseNth({ 'follow-up': [1] }, how);
    const s = await start({ chunkDelayMs: 0, fake: { chaos: faults } });
    const { fake, channelId } = s;
    const ask = fake.dispatchInteraction({
      channelId,
      userId: ANN,
      name: 'ask',
      options: [{ name: 'text', type: 3, value: 'give me [long 5200]' }],
    });
    const expected = longMarkdown(5200);
    const mine = () => fake.botMessages(channelId).filter((m) => m.interactionId === ask.id && !m.ephemeral);
    await fake.waitUntil(
      () => {
        const texts = mine().map((m) => m.content);
        return mine().every(replyEnded) && partsProblems(texts, expected).length === 0 ? texts : undefined;
      },
      20_000,
      'the complete /ask reply',
    );
    expect(faults.lost).toEqual(['follow-up#1']);
    expect(mine().length).toBe(3);
  });

  it('/ask: the interaction response edit lost is repeated as it is', async () => {
    const faults = loseNth({ 'webhook-edit': [1] }, how);
    const s = await start({ chunkDelayMs: 10, fake: { chaos: faults } });
    const { fake, channelId } = s;
    const ask = fake.dispatchInteraction({
      channelId,
      userId: ANN,
      name: 'ask',
      options: [{ name: 'text', type: 3, value: Q }],
    });
    await fake.waitUntil(() =>
      fake
        .botMessages(channelId)
        .find((m) => m.interactionId === ask.id && m.content === `You said: ${Q}` && replyEnded(m)),
    );
    expect(faults.lost).toEqual(['webhook-edit#1']);
    expect(fake.botMessages(channelId).filter((m) => m.interactionId === ask.id)).toHaveLength(1);
  });
});
