import { expect, it } from 'vitest';
import { replyText } from '../../src/emulator/replies.js';
import type { BridgeMetrics } from '../../src/core/metrics-port.js';
import { createMetrics, type PromBridgeMetrics } from '../../src/server/metrics.js';
import { type DiscordRefusal, discordRefusals as R } from '../fakes/discord/refusals.js';
import { mention } from './discord/harness.js';
import { ANN, type Stack, stackPerTest } from './discord/stack.js';

// A message write Discord refuses for its form (50035 Invalid Form Body on components, embeds or
// content) goes again at once as plain content (discord/plain-fallback.ts): through the real
// discord.js against the fake Discord refusing in several shapes, the user sees one reply, exact
// and final, every table cell readable, and bridge_rich_fallback_total moved.

const start = stackPerTest();

interface Rig {
  s: Stack;
  metrics: PromBridgeMetrics;
  /** Resolves when the relay counted the reply finished (or failed). */
  ended: Promise<string>;
}

async function rig(refuse: DiscordRefusal, feedback = false): Promise<Rig> {
  const metrics = createMetrics({ defaultMetrics: false, platforms: ['discord'] });
  let end!: (how: string) => void;
  const ended = new Promise<string>((resolve) => (end = resolve));
  const observed: BridgeMetrics = {
    ...metrics,
    replyFinished: (p) => {
      metrics.replyFinished(p);
      end('finished');
    },
    replyFailed: (p, reason) => {
      metrics.replyFailed(p, reason);
      end(`failed: ${reason}`);
    },
  };
  const s = await start({ chunkDelayMs: 0, fake: { refuse }, metrics: observed, relaySettings: { feedback } });
  return { s, metrics, ended };
}

async function fallbacks(metrics: PromBridgeMetrics, reason?: string): Promise<number> {
  const text = await metrics.text();
  let n = 0;
  for (const m of text.matchAll(/^bridge_rich_fallback_total\{platform="discord",reason="([^"]+)"\} (\d+)/gm)) {
    if (reason === undefined || m[1] === reason) n += Number(m[2]);
  }
  return n;
}

/** A mention in the channel (thread mode): the bot's messages in the thread once the reply ended. */
async function ask(r: Rig, text: string) {
  const { fake, channelId } = r.s;
  const user = fake.dispatchMessage({ channelId, authorId: ANN, content: mention(fake, text), mentionsBot: true });
  expect(await r.ended).toBe('finished');
  return fake.botMessages(String(user.id));
}

it('components refused: the reply arrives exact and final as plain content, counted once', async () => {
  const r = await rig(R.components());
  const msgs = await ask(r, 'hello plain world');
  expect(msgs.map((m) => m.content)).toEqual(['You said: hello plain world']);
  expect(msgs[0]?.components).toEqual([]);
  expect(await fallbacks(r.metrics, 'invalid_form_body:components')).toBe(1);
});

it('components refused, a table: every cell readable in the code block, one message', async () => {
  const r = await rig(R.rich());
  const msgs = await ask(r, 'show me [table 6]');
  expect(msgs).toHaveLength(1);
  const text = msgs[0]?.content ?? '';
  expect(text).toContain('Here is the table:');
  for (let i = 1; i <= 6; i++) expect(text).toMatch(new RegExp(`row ${i} +\\| +${i * 7} \\| +[bc]${i}`));
  expect(text.indexOf('That is all.')).toBeGreaterThan(text.indexOf('row 6'));
  expect(await fallbacks(r.metrics)).toBe(1);
});

it('only the final edit refused (its feedback buttons): the final text still lands', async () => {
  const onlyEdits: DiscordRefusal = (method, body) =>
    method.startsWith('PATCH') && JSON.stringify(body.components ?? []).includes('vote')
      ? R.components()(method, body)
      : undefined;
  const r = await rig(onlyEdits, true);
  const msgs = await ask(r, 'rate me');
  expect(msgs.map((m) => m.content)).toEqual(['You said: rate me']);
  expect(JSON.stringify(msgs[0]?.components)).not.toContain('stop');
  expect(await fallbacks(r.metrics, 'invalid_form_body:components')).toBe(1);
});

it('a long reply with components refused: every part under 2,000, the words whole and once', async () => {
  const r = await rig(R.components());
  const msgs = await ask(r, 'give me [long 4500]');
  expect(msgs.length).toBeGreaterThanOrEqual(3);
  for (const m of msgs) {
    expect(m.content.length).toBeLessThanOrEqual(2000);
    expect(m.components).toEqual([]);
  }
  // The parts joined are the reply (cuts at whitespace; a cut code block closed and reopened).
  const words = (t: string) => t.replace(/```[a-z]*\n?/g, '').replace(/\s+/g, '');
  expect(words(msgs.map((m) => m.content).join(''))).toBe(words(replyText('give me [long 4500]')));
  expect(await fallbacks(r.metrics)).toBe(1);
});

it('/ask with components refused: the interaction reply is plain content, final', async () => {
  const r = await rig(R.components());
  const { fake, channelId } = r.s;
  const cmd = fake.dispatchInteraction({
    channelId,
    userId: ANN,
    name: 'ask',
    options: [{ name: 'text', type: 3, value: 'slash words' }],
  });
  expect(await r.ended).toBe('finished');
  const shown = fake.botMessages(channelId).filter((m) => m.interactionId === cmd.id);
  expect(shown.map((m) => m.content)).toEqual(['You said: slash words']);
  expect(shown[0]?.components).toEqual([]);
  expect(await fallbacks(r.metrics, 'invalid_form_body:components')).toBe(1);
});
