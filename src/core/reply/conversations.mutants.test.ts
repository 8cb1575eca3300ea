import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { FakeChat } from '../../../test/fakes/fake-chat.js';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { MemoryConversationStore } from '../../../test/fakes/memory-store.js';
import { Conversations } from './conversations.js';
import type { ConversationRecord, ExpectedUpstreamId, Place } from '../ports.js';

// Conversation renewal rule by rule: the idle boundary, what is stored, the Form A paths, the
// reset marks and the replica race, with the operator's log lines (mutation testing).

const place: Place = { platform: 'test', channelId: 'C1' };
const START = 1_000_000;

/** Counts puts; optionally loses every compare-and-set to a given winner. */
class CountingStore extends MemoryConversationStore {
  puts = 0;
  winner: ConversationRecord | undefined;
  noCas = false;
  override async put(rec: ConversationRecord): Promise<void> {
    this.puts++;
    await super.put(rec);
  }
  override async replaceIfUnchanged(
    p: Place,
    expected: ExpectedUpstreamId,
    next: ConversationRecord,
  ): Promise<boolean> {
    if (this.winner === undefined) return super.replaceIfUnchanged(p, expected, next);
    await super.put(this.winner);
    return false;
  }
}

function setup(form: 'a' | 'b' = 'b', store = new CountingStore()) {
  const clock = new ManualClock(START);
  const lines: Array<{ level: number; msg: string; idleSeconds?: number }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
      done();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const make = (f = form) => new Conversations({ store, chat: new FakeChat(f), clock, sessionIdleSeconds: 60, logger });
  const msgs = () => lines.map((l) => l.msg);
  return { clock, store, c: make(), make, lines, msgs };
}

describe('Conversations: idle renewal', () => {
  it('keeps the conversation at exactly the idle time, renews one millisecond later, and logs why', async () => {
    const { c, clock, store, lines } = setup();
    const first = (await c.begin(place, 'bot')).conversationId;
    await clock.advance(60_000);
    expect(await c.begin(place, 'bot')).toEqual({
      conversationId: first,
      fresh: false,
      renewed: false,
      useSend: false,
    });
    expect((await store.get(place))?.lastUsedAt).toBe(START + 60_000);
    expect(lines).toEqual([]);
    await clock.advance(60_001);
    const renewed = await c.begin(place, 'bot');
    expect(renewed).toMatchObject({ fresh: true, renewed: true, useSend: false });
    expect(renewed.conversationId).not.toBe(first);
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, msg: 'conversation idle too long; renewing', idleSeconds: 60 }),
    ]);
  });

  it('stores the whole mapping: place, bot, flavor, id and both times', async () => {
    const { c, clock, store } = setup();
    await clock.advance(5_000);
    const t = await c.begin(place, 'bot');
    expect(await store.get(place)).toEqual({
      place,
      botId: 'bot',
      flavor: 'b',
      upstreamId: t.conversationId,
      createdAt: START + 5_000,
      lastUsedAt: START + 5_000,
    });
  });

  it('a mapping of another chat flavor starts a new conversation quietly', async () => {
    const store = new CountingStore();
    const b = setup('b', store);
    await b.c.begin(place, 'bot');
    const a = b.make('a');
    expect(await a.begin(place, 'bot')).toEqual({
      conversationId: undefined,
      fresh: true,
      renewed: false,
      useSend: false,
    });
    expect((await store.get(place))?.flavor).toBe('a');
    expect(b.lines).toEqual([]);
  });
});

describe('Conversations: Form A (ids from replies)', () => {
  it('a mapping without an id yet starts again, and is not a renewal even when idle', async () => {
    const { c, clock } = setup('a');
    await c.begin(place, 'bot');
    expect(await c.begin(place, 'bot')).toEqual({
      conversationId: undefined,
      fresh: true,
      renewed: false,
      useSend: false,
    });
    await clock.advance(61_000);
    expect(await c.begin(place, 'bot')).toEqual({
      conversationId: undefined,
      fresh: true,
      renewed: false,
      useSend: false,
    });
  });

  it('an idle mapping with a captured id is renewed', async () => {
    const { c, clock } = setup('a');
    await c.begin(place, 'bot');
    await c.captured(place, 'bot', 'conv-1');
    await clock.advance(61_000);
    expect(await c.begin(place, 'bot')).toEqual({
      conversationId: undefined,
      fresh: true,
      renewed: true,
      useSend: false,
    });
  });

  it('captured writes only for the same bot, only when the id changed, never without a mapping', async () => {
    const { c, store } = setup('a');
    await c.captured(place, 'bot', 'conv-0');
    expect(store.size).toBe(0);
    await c.begin(place, 'bot');
    const before = store.puts;
    await c.captured(place, 'other', 'conv-x');
    expect((await store.get(place))?.upstreamId).toBeUndefined();
    await c.captured(place, 'bot', 'conv-1');
    expect((await store.get(place))?.upstreamId).toBe('conv-1');
    await c.captured(place, 'bot', 'conv-1');
    expect(store.puts).toBe(before + 1);
    expect(await c.begin(place, 'bot')).toEqual({
      conversationId: 'conv-1',
      fresh: false,
      renewed: false,
      useSend: false,
    });
  });

  it('after a stream revealed no id, new conversations use send (Form A only), with one warning', async () => {
    const a = setup('a');
    expect((await a.c.begin(place, 'bot')).useSend).toBe(false);
    a.c.noIdFromStream();
    expect(a.lines).toHaveLength(1);
    a.c.noIdFromStream();
    a.c.noIdFromStream();
    expect((await a.c.begin({ ...place, channelId: 'C2' }, 'bot')).useSend).toBe(true);
    expect(a.lines).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'upstream streams do not reveal conversation ids; first turns will use the one-response endpoint',
      }),
    ]);
    const b = setup('b');
    b.c.noIdFromStream();
    expect((await b.c.begin(place, 'bot')).useSend).toBe(false);
  });
});

describe('Conversations: renew and reset', () => {
  it('renew replaces the stored id and logs it', async () => {
    const { c, store, msgs } = setup();
    await c.begin(place, 'bot');
    const r = await c.renew(place, 'bot');
    expect(r).toMatchObject({ fresh: true, renewed: true, useSend: false });
    expect(r).not.toHaveProperty('afterReset');
    expect((await store.get(place))?.upstreamId).toBe(r.conversationId);
    expect(msgs()).toEqual(['upstream conversation gone; renewing']);
  });

  it('the first conversation after a reset says so, once; a renewal does not', async () => {
    const { c } = setup();
    await c.begin(place, 'bot');
    await c.reset(place);
    const t = await c.begin(place, 'bot');
    expect(t).toEqual({
      conversationId: t.conversationId,
      fresh: true,
      renewed: false,
      useSend: false,
      afterReset: true,
    });
    await c.reset(place);
    await c.reset(place);
    const again = await c.begin(place, 'bot');
    expect(again.afterReset).toBe(true);
    expect((await c.begin({ ...place, channelId: 'C9' }, 'bot')).afterReset).toBeUndefined();
    await c.reset(place);
    expect(await c.renew(place, 'bot')).not.toHaveProperty('afterReset');
    expect(await c.begin(place, 'bot')).not.toHaveProperty('afterReset');
  });

  it('keeps at most 10,000 reset marks, dropping the oldest (a reset again counts as new)', async () => {
    const { c } = setup();
    const p = (i: number): Place => ({ ...place, channelId: `R${i}` });
    for (let i = 0; i < 10_000; i++) await c.reset(p(i));
    await c.reset(p(0)); // now the newest
    await c.reset(p(10_000)); // 10,001 marks: R1 is dropped
    expect((await c.begin(p(1), 'bot')).afterReset).toBeUndefined();
    expect((await c.begin(p(0), 'bot')).afterReset).toBe(true);
    expect((await c.begin(p(2), 'bot')).afterReset).toBe(true);
    expect((await c.begin(p(10_000), 'bot')).afterReset).toBe(true);
  });
});

describe('Conversations: another replica first', () => {
  it("uses the winner's conversation when it has an id and the same bot", async () => {
    const store = new CountingStore();
    store.winner = { place, botId: 'bot', flavor: 'b', upstreamId: 'won', createdAt: 1, lastUsedAt: 1 };
    const { c, msgs } = setup('b', store);
    expect(await c.begin(place, 'bot')).toEqual({
      conversationId: 'won',
      fresh: false,
      renewed: false,
      useSend: false,
    });
    expect(msgs()).toEqual(['another replica started the conversation first; using it']);
  });

  it("replaces a winner's mapping it cannot use (no id yet, or another bot) with its own", async () => {
    for (const winner of [
      { place, botId: 'bot', flavor: 'b', upstreamId: undefined, createdAt: 1, lastUsedAt: 1 },
      { place, botId: 'other', flavor: 'b', upstreamId: 'theirs', createdAt: 1, lastUsedAt: 1 },
    ]) {
      const store = new CountingStore();
      store.winner = winner;
      const { c, lines } = setup('b', store);
      const t = await c.begin(place, 'bot');
      expect(t).toMatchObject({ fresh: true, renewed: false });
      expect(t.conversationId).toMatch(/^[0-9a-f-]{36}$/);
      expect(await store.get(place)).toMatchObject({ botId: 'bot', upstreamId: t.conversationId });
      expect(lines).toEqual([]);
    }
  });

  it('stores its own conversation when the mapping it read was deleted meanwhile (a reset elsewhere)', async () => {
    class DeletedMeanwhile extends CountingStore {
      override async replaceIfUnchanged(): Promise<boolean> {
        await this.delete(place);
        return false;
      }
    }
    const store = new DeletedMeanwhile();
    const { c, lines } = setup('b', store);
    const t = await c.begin(place, 'bot');
    expect(t).toMatchObject({ fresh: true, renewed: false, useSend: false });
    expect(t.conversationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await store.get(place)).toMatchObject({ botId: 'bot', upstreamId: t.conversationId });
    expect(lines).toEqual([]);
  });

  it('a store without compare-and-set is simply written', async () => {
    const store = new MemoryConversationStore();
    Object.defineProperty(store, 'replaceIfUnchanged', { value: undefined });
    const { c } = setup('b', store as CountingStore);
    const t = await c.begin(place, 'bot');
    expect((await store.get(place))?.upstreamId).toBe(t.conversationId);
  });
});
