import { afterEach, expect, it } from 'vitest';
import { type SlackStack, startSlackStack } from './slack-stack.js';

// A reply of `*a` repeated to 39,000 characters (an emphasis run the Markdown parser is
// quadratic on) through Bolt over HTTP and the fake Slack, edit mode: every part arrives, shown as
// written (no parser), and the parts joined are the reply exactly. The expected text is written
// out here, not rendered by the code under test. (Its speed is a bench figure: npm run bench.)

let s: SlackStack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

// About 11 s: the fake's postMessage budget paces the 11 parts (1 a second per channel).
it('a 39,000-character *a reply arrives whole, shown as written, in edit mode', { timeout: 60_000 }, async () => {
  s = await startSlackStack({ mode: 'http', streaming: 'edit', chunkDelayMs: 1, maxMessageChars: 50_000 });
  const { fake } = s;
  const run = '*a'.repeat(19_500 - 10);
  const post = fake.userPost({ channel: 'C1', text: `<@U0BOT> [chunks 40] <!here> ${run}` });
  expect((await fake.postSignedEvent(s.eventsUrl, fake.envelope(post.mention ?? {}))).status).toBe(200);
  await s.settled(1);
  const parts = fake.botMessages('C1', post.ts).map((m) => m.text);
  expect(parts.length).toBeGreaterThanOrEqual(10);
  for (const p of parts) expect(p.length).toBeLessThanOrEqual(3900);
  // The first part ends at the only space (the run has no boundary); only `<`, `>` and `&` are
  // escaped. The run is hard cut between characters, so its parts joined give it back exactly.
  expect(parts[0]).toBe('You said: [chunks 40] &lt;!here&gt;');
  expect(parts.slice(1).join('')).toBe(run);
});
