import { describe, expect, it } from 'vitest';
import { FakeChat } from '../../../test/fakes/fake-chat.js';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { silentLogger } from '../../logger.js';
import { Conversations } from './conversations.js';
import { MemoryConversationStore } from '../../../test/fakes/memory-store.js';
import type { Place } from '../ports.js';

const place: Place = { platform: 'test', channelId: 'C1' };

function setup(form: 'a' | 'b') {
  const clock = new ManualClock();
  const store = new MemoryConversationStore();
  const c = new Conversations({ store, chat: new FakeChat(form), clock, sessionIdleSeconds: 60, logger: silentLogger });
  return { clock, store, c };
}

describe('Conversations', async () => {
  it('Form B: mints and stores a session id before the first send, then reuses it', async () => {
    const { c, store } = setup('b');
    const t1 = await c.begin(place, 'bot');
    expect(t1).toMatchObject({ fresh: true, renewed: false, useSend: false });
    expect(t1.conversationId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await store.get(place))?.upstreamId).toBe(t1.conversationId);
    expect(await c.begin(place, 'bot')).toEqual({
      conversationId: t1.conversationId,
      fresh: false,
      renewed: false,
      useSend: false,
    });
  });

  it('Form A: no id until the reply names one', async () => {
    const { c } = setup('a');
    expect(await c.begin(place, 'bot')).toMatchObject({ conversationId: undefined, fresh: true, renewed: false });
    await c.captured(place, 'bot', 'conv-9');
    expect(await c.begin(place, 'bot')).toMatchObject({ conversationId: 'conv-9', fresh: false });
    c.noIdFromStream();
    expect((await c.begin({ ...place, channelId: 'C2' }, 'bot')).useSend).toBe(true);
  });

  it('renews after the idle time, and when the bot of the place changed starts quietly', async () => {
    const { c, clock } = setup('b');
    const first = (await c.begin(place, 'bot')).conversationId;
    await clock.advance(59_000);
    expect((await c.begin(place, 'bot')).conversationId).toBe(first); // touched: idle counts from here
    await clock.advance(61_000);
    const renewed = await c.begin(place, 'bot');
    expect(renewed).toMatchObject({ fresh: true, renewed: true });
    expect(renewed.conversationId).not.toBe(first);
    expect(await c.begin(place, 'other-bot')).toMatchObject({ fresh: true, renewed: false });
  });

  it('renew and reset', async () => {
    const { c, store } = setup('b');
    const first = (await c.begin(place, 'bot')).conversationId;
    const r = await c.renew(place, 'bot');
    expect(r.renewed).toBe(true);
    expect(r.conversationId).not.toBe(first);
    await c.reset(place);
    expect(await store.get(place)).toBeUndefined();
  });
});

describe('Conversations with several replicas', () => {
  it('two replicas renewing the same expired place start one new conversation', async () => {
    const clock = new ManualClock();
    const store = new MemoryConversationStore();
    const make = () =>
      new Conversations({ store, chat: new FakeChat('b'), clock, sessionIdleSeconds: 60, logger: silentLogger });
    const a = make();
    const b = make();
    const first = (await a.begin(place, 'bot')).conversationId;
    await clock.advance(61_000);
    const [ta, tb] = await Promise.all([a.begin(place, 'bot'), b.begin(place, 'bot')]);
    expect(ta.conversationId).not.toBe(first);
    expect(tb.conversationId).toBe(ta.conversationId);
    expect((await store.get(place))?.upstreamId).toBe(ta.conversationId);
  });
});
