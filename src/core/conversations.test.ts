import { describe, expect, it } from 'vitest';
import { FakeChat } from '../../test/fakes/fake-chat.js';
import { ManualClock } from '../../test/fakes/manual-clock.js';
import { silentLogger } from '../logger.js';
import { Conversations } from './conversations.js';
import { MemoryConversationStore } from '../../test/fakes/memory-store.js';
import type { Place } from './ports.js';

const place: Place = { platform: 'test', channelId: 'C1' };

function setup(form: 'a' | 'b') {
  const clock = new ManualClock();
  const store = new MemoryConversationStore();
  const c = new Conversations({ store, chat: new FakeChat(form), clock, sessionIdleSeconds: 60, logger: silentLogger });
  return { clock, store, c };
}

describe('Conversations', () => {
  it('Form B: mints and stores a session id before the first send, then reuses it', () => {
    const { c, store } = setup('b');
    const t1 = c.begin(place, 'bot');
    expect(t1).toMatchObject({ fresh: true, renewed: false, useSend: false });
    expect(t1.conversationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(store.get(place)?.upstreamId).toBe(t1.conversationId);
    expect(c.begin(place, 'bot')).toEqual({
      conversationId: t1.conversationId,
      fresh: false,
      renewed: false,
      useSend: false,
    });
  });

  it('Form A: no id until the reply names one', () => {
    const { c } = setup('a');
    expect(c.begin(place, 'bot')).toMatchObject({ conversationId: undefined, fresh: true, renewed: false });
    c.captured(place, 'bot', 'conv-9');
    expect(c.begin(place, 'bot')).toMatchObject({ conversationId: 'conv-9', fresh: false });
    c.noIdFromStream();
    expect(c.begin({ ...place, channelId: 'C2' }, 'bot').useSend).toBe(true);
  });

  it('renews after the idle time, and when the bot of the place changed starts quietly', async () => {
    const { c, clock } = setup('b');
    const first = c.begin(place, 'bot').conversationId;
    await clock.advance(59_000);
    expect(c.begin(place, 'bot').conversationId).toBe(first); // touched: idle counts from here
    await clock.advance(61_000);
    const renewed = c.begin(place, 'bot');
    expect(renewed).toMatchObject({ fresh: true, renewed: true });
    expect(renewed.conversationId).not.toBe(first);
    expect(c.begin(place, 'other-bot')).toMatchObject({ fresh: true, renewed: false });
  });

  it('renew and reset', () => {
    const { c, store } = setup('b');
    const first = c.begin(place, 'bot').conversationId;
    const r = c.renew(place, 'bot');
    expect(r.renewed).toBe(true);
    expect(r.conversationId).not.toBe(first);
    c.reset(place);
    expect(store.get(place)).toBeUndefined();
  });
});
