import { describe, expect, it } from 'vitest';
import { EmulatorConversations, historyWindow } from './state.js';
import type { StoredMessage } from './types.js';

const msgs: StoredMessage[] = Array.from({ length: 6 }, (_, i) => ({
  id: `m${i}`,
  role: i % 2 ? 'assistant' : 'user',
  content: `c${i}`,
  timestamp: new Date(i * 1000).toISOString(),
}));
const ids = (w: ReturnType<typeof historyWindow>) => (w.ok ? w.messages.map((m) => m.id) : w.reason);

describe('historyWindow', () => {
  it('latest, before, after, between', () => {
    expect(ids(historyWindow(msgs, 2, undefined, undefined))).toEqual(['m4', 'm5']);
    expect(historyWindow(msgs, 2, undefined, undefined)).toMatchObject({ hasMore: true });
    expect(historyWindow(msgs, 6, undefined, undefined)).toMatchObject({ hasMore: false });
    expect(ids(historyWindow(msgs, 2, 'm3', undefined))).toEqual(['m1', 'm2']);
    expect(ids(historyWindow(msgs, 2, undefined, 'm1'))).toEqual(['m2', 'm3']);
    expect(historyWindow(msgs, 2, undefined, 'm3')).toMatchObject({ hasMore: false });
    expect(ids(historyWindow(msgs, 10, 'm4', 'm1'))).toEqual(['m2', 'm3']);
    expect(ids(historyWindow(msgs, 10, 'm1', 'm4'))).toEqual([]);
    expect(historyWindow(msgs, 2, 'zz', undefined).ok).toBe(false);
  });
});

describe('EmulatorConversations', () => {
  it('expires idle conversations by the injected clock and forgets them', () => {
    let now = 0;
    const store = new EmulatorConversations(
      () => now,
      () => 10,
    );
    const c = store.create('b', 'bot', 's1');
    store.addMessage(c, 'user', 'hi');
    now = 10_000;
    expect(store.lookup('b', 's1').kind).toBe('ok');
    expect(store.lookup('a', 's1').kind).toBe('unknown');
    now = 20_001;
    expect(store.lookup('b', 's1').kind).toBe('expired');
    expect(store.lookup('b', 's1').kind).toBe('unknown');
  });

  it('previews the last message, cut at 80 characters', () => {
    const store = new EmulatorConversations(
      () => 0,
      () => 100,
    );
    const c = store.create('a', 'bot', 'c1');
    store.addMessage(c, 'user', `${'é'.repeat(100)}`);
    const [summary] = store.listA('bot', 1, 20, undefined).conversations;
    expect(Array.from(summary?.preview ?? '')).toHaveLength(80);
    expect(summary?.preview.endsWith('…')).toBe(true);
  });
});
