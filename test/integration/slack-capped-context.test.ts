import { afterEach, describe, expect, it } from 'vitest';
import type { ContextMessage } from '../../src/core/chat-port.js';
import type { RelaySettings } from '../../src/core/intake/relay.js';
import type { CappedHistoryOptions } from '../fakes/slack/index.js';
import { type SlackStack, startSlackStack } from './slack-stack.js';

// Context under Slack's caps for commercial apps outside the Marketplace: conversations.replies
// gives 15 messages a call whatever `limit` asks, and one call a minute. A mention at the end of
// a 40-message thread must send the upstream the thread's LAST messages (the 30 just before the
// mention), not its first 15: from pages read toward the newest end, and from the record of the
// messages the bridge received in events when the read is refused.

const context = (): Partial<RelaySettings> => ({ context: { mode: 'metadata', maxMessages: 30, maxChars: 6000 } });

const THREAD = 40;
const text = (i: number) => `message number ${i}`;

function contextTexts(s: SlackStack): string[] {
  const req = s.chatRequests()[0];
  const ctx = (req?.metadata as { context?: ContextMessage[] } | undefined)?.context ?? [];
  return ctx.map((m) => m.text);
}

/** The texts of messages `from`..`to` of the thread (1 is the parent). */
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => text(from + k));

describe('Slack context under capped history reads', () => {
  let s: SlackStack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  /** A 40-message thread written before the bridge ran: no events, only history reads know it. */
  function seedUnseen(stack: SlackStack): string {
    const parent = stack.fake.seedMessage('C1', { user: 'U0BOB', text: text(1) });
    for (let i = 2; i <= THREAD; i++) stack.fake.seedMessage('C1', { user: 'U0BOB', text: text(i), threadTs: parent });
    return parent;
  }

  /** A 40-message thread the bridge received as events but was not mentioned in. */
  async function postSeen(stack: SlackStack): Promise<string> {
    const first = stack.fake.userPost({ channel: 'C1', text: text(1), user: 'U0BOB' });
    await stack.fake.sendEvent(first.message);
    for (let i = 2; i <= THREAD; i++) {
      const p = stack.fake.userPost({ channel: 'C1', text: text(i), user: 'U0BOB', threadTs: first.ts });
      await stack.fake.sendEvent(p.message);
    }
    return first.ts;
  }

  async function mentionAtEnd(stack: SlackStack, parent: string): Promise<void> {
    const post = stack.fake.userPost({ channel: 'C1', text: '<@U0BOT> summarize', threadTs: parent, user: 'U0ANN' });
    await stack.fake.sendEvent(post.message);
    await stack.fake.sendEvent(post.mention ?? {});
    // The message and app_mention events are one message: one is a duplicate.
    await stack.settled(2);
  }

  const shapes: [string, CappedHistoryOptions][] = [
    ['15 a call whatever the limit, oldest first from the parent, a cursor to newer', { page: 'oldest-first' }],
    ['15 a call, the newest page first, a cursor to older', { page: 'newest' }],
  ];

  it.each(shapes)('%s: the context is the 30 messages just before the mention', async (_name, cap) => {
    s = await startSlackStack({ relaySettings: context(), fake: { cappedHistory: cap } });
    const parent = seedUnseen(s);
    await mentionAtEnd(s, parent);
    expect(contextTexts(s)).toEqual(range(THREAD - 29, THREAD));
    const reads = s.fake.calls.filter((c) => c.method === 'conversations.replies' && c.args.latest !== undefined);
    // Every page was capped at 15, whatever the reader asked for.
    expect(reads.length).toBeGreaterThanOrEqual(2);
    expect(s.fake.botMessages('C1', parent).at(-1)?.text).toContain('summarize');
  });

  it('one call a minute, the minute already spent: the context comes from the messages the bridge received', async () => {
    s = await startSlackStack({
      relaySettings: context(),
      fake: { cappedHistory: { page: 'oldest-first', callsPerMinute: 1 } },
    });
    const parent = await postSeen(s);
    // Spend the workspace's one read of the minute, as another thread's mention would.
    const other = s.fake.seedMessage('C2', { user: 'U0BOB', text: 'elsewhere' });
    await s.fake.sendEvent(s.fake.userPost({ channel: 'C2', text: 'hi', user: 'U0BOB', threadTs: other }).message);
    await s.fake.waitForCall((c) => c.method === 'conversations.replies' && c.result === 'ok');
    await mentionAtEnd(s, parent);
    expect(contextTexts(s)).toEqual(range(THREAD - 29, THREAD));
    expect(s.fake.switches.cappedHistory?.refused['conversations.replies']).toBeGreaterThanOrEqual(1);
    // And the reply still happened, whole.
    expect(s.fake.botMessages('C1', parent).at(-1)?.text).toContain('summarize');
  });

  it('one call a minute, a thread the bridge never saw: the first page read, the rest refused, the reply still goes out', async () => {
    s = await startSlackStack({
      relaySettings: context(),
      fake: { cappedHistory: { page: 'oldest-first', callsPerMinute: 1 } },
    });
    const parent = seedUnseen(s);
    await mentionAtEnd(s, parent);
    // Best effort: the one page Slack gave (the thread's beginning); the refused page is not waited for.
    expect(contextTexts(s)).toEqual(range(1, 15));
    expect(s.fake.switches.cappedHistory?.refused['conversations.replies']).toBe(1);
    expect(s.fake.botMessages('C1', parent).at(-1)?.text).toContain('summarize');
  });

  it('a record of the thread and an uncapped read agree: one context, each message once', async () => {
    s = await startSlackStack({ relaySettings: context() });
    const parent = await postSeen(s);
    await mentionAtEnd(s, parent);
    expect(contextTexts(s)).toEqual(range(THREAD - 29, THREAD));
  });
});
