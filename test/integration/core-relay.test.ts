import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatService, ChatStream, StreamEvent } from '../../src/core/chat-port.js';
import { noopMetrics } from '../../src/core/metrics-port.js';
import type { Clock } from '../../src/core/ports.js';
import { createRelay, type Relay, type RelaySettings } from '../../src/core/intake/relay.js';
import { fencesBalanced } from '../../src/core/reply/fences.js';
import { MESSAGES } from '../../src/core/user-messages.js';
import { type Emulator, replyText, startEmulator } from '../../src/emulator/index.js';
import { silentLogger } from '../../src/logger.js';
import { openStore, type SqliteStore } from '../../src/store/sqlite/index.js';
import { createChatService } from '../../src/upstream/index.js';
import { TestConnector } from '../fakes/test-connector.js';
import { PRODUCT_UPSTREAM_TIMEOUTS, testRelaySettings } from '../fakes/relay-settings.js';

// The core against the real emulator, the real upstream client and the real SQLite store, with
// the test connector (a Discord-like 5-writes-per-5-s bucket per channel, a final write for every
// message) and real timing.

/** Real time that a test can move forward (idle renewal) without sleeping. */
class ShiftClock implements Clock {
  offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
  setTimeout(fn: () => void, ms: number): { clear(): void } {
    const t = setTimeout(fn, ms);
    return { clear: () => clearTimeout(t) };
  }
}

interface World {
  emu: Emulator;
  chat: ChatService;
  store: SqliteStore;
  conn: TestConnector;
  relay: Relay;
  clock: ShiftClock;
  firstToken: Map<string, number>;
  firstText: Map<string, number>;
  /** Resolves when the reply to this event first shows text on the platform. */
  shown(eventId: string): Promise<void>;
  dir: string;
}

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

interface WorldOptions {
  form?: 'a' | 'b';
  settings?: Partial<RelaySettings>;
  emulator?: Parameters<typeof startEmulator>[0];
  apiKey?: string;
  url?: string;
  dbPath?: string;
  maxChars?: number;
  /** Writes per 5 s per channel (default 5, like Discord). */
  bucketLimit?: number;
  /** The bot every place is routed to (default the emulator's `demo-bot`). */
  botId?: string;
  /** The client's cap on one reply's text (CHAT_REPLY_MAX_CHARS). */
  maxReplyChars?: number;
  /** Silence that ends a stream (default 5 s: a busy machine can hold a healthy stream's next chunk
   * back for a second; only the stall test, whose stream never goes on, wants a short one). */
  streamIdleTimeoutMs?: number;
  /**
   * The upstream client's connect-and-first-byte budget (default 5 s). It is wall time in the
   * test's own process, which runs the emulator too: a test that loads that process passes the
   * product's (PRODUCT_UPSTREAM_TIMEOUTS).
   */
  requestTimeoutMs?: number;
  /** Stands between the relay and the real upstream client (e.g. holds a stream's end back). */
  wrapChat?: (chat: ChatService) => ChatService;
}

async function world(o: WorldOptions = {}): Promise<World> {
  const form = o.form ?? 'b';
  const emu = await startEmulator({ chunkDelayMs: 5, ...o.emulator });
  open.push(() => emu.close());
  const chat = createChatService({
    url: o.url ?? emu.url,
    apiKey: o.apiKey ?? 'dev-key',
    form,
    requestTimeoutMs: o.requestTimeoutMs ?? 5000,
    streamIdleTimeoutMs: o.streamIdleTimeoutMs ?? 5000,
    logger: silentLogger,
    retry: { baseDelayMs: 20, rateLimitBudgetMs: 1500 },
    ...(o.maxReplyChars !== undefined ? { maxReplyChars: o.maxReplyChars } : {}),
  });
  open.push(() => chat.close());
  const relayChat = o.wrapChat?.(chat) ?? chat;
  const dir = mkdtempSync(join(tmpdir(), 'core-relay-'));
  const store = openStore(o.dbPath ?? join(dir, 'bridge.db'));
  open.push(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const clock = new ShiftClock();
  const conn = new TestConnector({
    clock,
    bucketLimit: o.bucketLimit ?? 5,
    bucketWindowMs: 5000,
    maxChars: o.maxChars ?? 2000,
    // Like Discord's sink (and every real one): each message ends with a final write, even one
    // that changes no text. A sink without the need may skip that write (ReplySink.needsFinalWrite),
    // and whether it does depends on whether an edit showed the whole text before the upstream's
    // end arrived: timing, which a test of every message's final write must not hang on.
    needsFinalWrite: true,
  });
  const firstToken = new Map<string, number>();
  const firstText = new Map<string, number>();
  const shownWaiters = new Map<string, () => void>();
  const botId = o.botId ?? 'demo-bot';
  // The core's ports are asynchronous: the SQLite store through its async adapter.
  const ports = store;
  const relay = createRelay({
    chat: relayChat,
    botFor: () => botId,
    conversations: ports.conversations,
    events: ports.events,
    inflight: ports.inflight,
    metrics: noopMetrics,
    logger: silentLogger,
    clock,
    settings: testRelaySettings({
      sessionIdleSeconds: 3600,
      userMessagesPerMinute: 1000,
      streamEditIntervalMs: 200,
      ...o.settings,
    }),
    hooks: {
      onFirstToken: (id, at) => firstToken.set(id, at),
      onFirstText: (id, at) => {
        firstText.set(id, at);
        shownWaiters.get(id)?.();
      },
    },
  });
  await conn.start(relay);
  open.push(() => relay.drain(1000));
  const shown = (eventId: string) =>
    firstText.has(eventId) ? Promise.resolve() : new Promise<void>((r) => shownWaiters.set(eventId, r));
  return { emu, chat, store, conn, relay, clock, firstToken, firstText, shown, dir };
}

/**
 * The reply as the user reads it across messages, checked against the expected text: each part
 * may start with a reopened fence line and end with an added closing fence; without them the
 * parts must spell the expected text exactly.
 */
function rebuild(parts: string[], expected: string): string {
  let out = '';
  parts.forEach((raw, i) => {
    let p = raw;
    const firstLine = p.slice(0, p.indexOf('\n') + 1);
    if (i > 0 && /^ {0,3}(`{3,}|~{3,})/.test(firstLine) && !expected.startsWith(firstLine, out.length))
      p = p.slice(firstLine.length);
    if (i < parts.length - 1 && !expected.startsWith(p, out.length)) {
      const m = /\n?(`{3,}|~{3,})$/.exec(p);
      for (const cut of m === null ? [] : [m[0], m[1] as string]) {
        if (expected.startsWith(p.slice(0, p.length - cut.length), out.length)) {
          p = p.slice(0, p.length - cut.length);
          break;
        }
      }
    }
    out += p;
  });
  return out;
}

/**
 * The upstream client, with each stream's end held back until `release` resolves: the stream is
 * read to its end first (so no idle timeout runs meanwhile), its text passed on as it comes.
 */
function endHeldUntil(chat: ChatService, release: Promise<void>): ChatService {
  return Object.assign(Object.create(chat) as ChatService, {
    stream: async (req: Parameters<ChatService['stream']>[0]): Promise<ChatStream> => {
      const inner = await chat.stream(req);
      async function* events(): AsyncGenerator<StreamEvent> {
        let end: StreamEvent | undefined;
        for await (const ev of inner) {
          if (ev.type === 'end') end = ev;
          else yield ev;
        }
        await release;
        if (end !== undefined) yield end;
      }
      return {
        get conversationId() {
          return inner.conversationId;
        },
        cancel: () => inner.cancel(),
        [Symbol.asyncIterator]: () => events(),
      };
    },
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

describe('core relay with the emulator, the upstream client and SQLite', () => {
  it('50 concurrent long replies: every final text exact, split right, zero 429s', async () => {
    // 50 streams at once load this process, which serves them too: at load 11-14 the requests
    // reached the emulator's handler one every 0.1-0.15 s (the one event loop busy with the
    // streams already running, both sides), each then answered within 0.15 s; the last few reached
    // it 5-7 s after they left and the 5 s budget failed them. The product's budgets apply here.
    const w = await world({
      requestTimeoutMs: PRODUCT_UPSTREAM_TIMEOUTS.requestMs,
      streamIdleTimeoutMs: PRODUCT_UPSTREAM_TIMEOUTS.streamIdleMs,
    });
    const cpuBefore = process.cpuUsage();
    const n = 50;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        w.conn.send({ text: `[long ${2300 + i * 13}] [chunks 40] #${i}`, channelId: `C${i}` }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 'answered'));
    for (let i = 0; i < n; i++) {
      const contents = w.conn.contentsIn(`C${i}`);
      expect(contents.length).toBeGreaterThanOrEqual(2);
      for (const c of contents) {
        expect(c.length).toBeLessThanOrEqual(2000);
        expect(fencesBalanced(c)).toBe(true);
      }
      expect(rebuild(contents, replyText(`[long ${2300 + i * 13}]`))).toBe(replyText(`[long ${2300 + i * 13}]`));
      expect(w.conn.messagesIn(`C${i}`).every((m) => m.final)).toBe(true);
    }
    expect(w.conn.rateLimitHits).toBe(0);
    expect(w.conn.violations).toEqual([]);
    const lat = [...w.firstText.entries()].map(([id, at]) => at - (w.firstToken.get(id) as number));
    expect(lat).toHaveLength(n);
    // Every reply showed text, after its first upstream chunk. How soon (target 20 ms) is a speed
    // figure, not a pass/fail bound on a shared machine: bench/ measures it ("first text", p50 and
    // p99) and it is printed here.
    console.log(`first upstream chunk → first post: median ${median(lat)} ms, max ${Math.max(...lat)} ms (n=${n})`);
    for (const l of lat) expect(l).toBeGreaterThanOrEqual(0);
    // Whether the bridge keeps up is a matter of the CPU it spends, which the machine's load does
    // not change: about 2 s for all 50 replies, the emulator's side included (measured at load
    // 14). Wall time is the load's: 6 s on an idle machine, 12 s at load 14, over 30 s at load 18
    // with five bridge processes starting beside it; the test's timeout only catches a hang.
    const cpu = process.cpuUsage(cpuBefore);
    expect((cpu.user + cpu.system) / 1e6).toBeLessThan(10);
  }, 180_000);

  it('a reply whose last edit showed all of it before the upstream ended still ends with a final write', async () => {
    // Under load the upstream's end can reach the bridge more than an edit interval after its last
    // text: an edit then shows the whole reply before the end is known (seen once at load 20+ in
    // the test above). Here the end is held until the platform shows the whole text.
    let release: () => void = () => {};
    const shownWhole = new Promise<void>((resolve) => (release = resolve));
    const w = await world({ wrapChat: (chat) => endHeldUntil(chat, shownWhole) });
    const expected = replyText('[long 300]');
    w.conn.onWrite = (write) => {
      if (!write.final && w.conn.contentsIn('C1').join('') === expected) release();
    };
    expect(await w.conn.send({ text: '[long 300] [chunks 6]' })).toEqual({ status: 'answered' });
    expect(w.conn.contentsIn('C1')).toEqual([expected]);
    expect(w.conn.writes.filter((x) => !x.final).at(-1)?.text).toBe(expected);
    expect(w.conn.messagesIn('C1').every((m) => m.final)).toBe(true);
    expect(w.conn.writes.at(-1)).toMatchObject({ text: expected, final: true });
  });

  it('answers a redelivered event once (one upstream call)', async () => {
    const w = await world();
    const rs = await Promise.all([1, 2, 3].map(() => w.conn.send({ text: 'only once', eventId: 'E-dup' })));
    expect(rs.map((r) => r.status).sort()).toEqual(['answered', 'duplicate', 'duplicate']);
    expect(w.emu.requests.filter((r) => r.message === 'only once')).toHaveLength(1);
    expect(w.conn.contentsIn('C1')).toEqual(['You said: only once']);
  });

  for (const form of ['a', 'b'] as const) {
    it(`Form ${form}: answers quick messages of one place in order, in one conversation`, async () => {
      // A roomier bucket: three replies of post + final edit would otherwise wait out a window.
      const w = await world({ form, bucketLimit: 20 });
      const rs = await Promise.all(['one', 'two', 'three'].map((t) => w.conn.send({ text: t })));
      expect(rs.map((r) => r.status)).toEqual(['answered', 'answered', 'answered']);
      expect(w.conn.contentsIn('C1')).toEqual(['You said: one', 'You said: two', 'You said: three']);
      const reqs = w.emu.requests.filter((r) => r.endpoint === 'stream');
      expect(reqs.map((r) => r.message)).toEqual(['one', 'two', 'three']);
      const ids = reqs.map((r) => r.conversationId);
      if (form === 'a') expect(ids[0]).toBeUndefined();
      expect(ids[1]).toBeDefined();
      expect(ids[2]).toBe(ids[1]);
      const conv = w.emu.conversation(ids[1] as string);
      if (conv !== undefined) expect(conv.messages.map((m) => m.content)).toContain('one');
      expect(reqs[0]?.metadata).toEqual({ source: 'test', channelId: 'C1', userId: 'U1', messageId: 'm-1' });
    });

    it(`Form ${form}: a conversation the upstream expired is renewed, the message resent, the user told`, async () => {
      const w = await world({ form });
      await w.conn.send({ text: 'first' });
      const known = (await w.store.conversations.get({ platform: 'test', channelId: 'C1' }))?.upstreamId as string;
      expect(w.emu.expire(known)).toBe(true);
      expect(await w.conn.send({ text: 'second' })).toEqual({ status: 'answered' });
      const reqs = w.emu.requests.filter((r) => r.message === 'second');
      expect(reqs).toHaveLength(2);
      expect(reqs[0]?.conversationId).toBe(known);
      expect(reqs[1]?.conversationId).not.toBe(known);
      expect(w.conn.contentsIn('C1').at(-1)).toBe(`${MESSAGES.renewed}You said: second`);
    });
  }

  it('Form A streams that name no conversation: first turns switch to A1, later turns stream in it', async () => {
    const w = await world({ form: 'a', emulator: { streamIds: 'none' }, bucketLimit: 20 });
    for (const t of ['one', 'two', 'three']) await w.conn.send({ text: t });
    const reqs = w.emu.requests.map((r) => [r.endpoint, r.message, r.conversationId]);
    expect(reqs[0]).toEqual(['stream', 'one', undefined]);
    expect(reqs[1]).toEqual(['send', 'two', undefined]);
    expect(reqs[2]?.[0]).toBe('stream');
    expect(reqs[2]?.[2]).toBe((await w.store.conversations.get({ platform: 'test', channelId: 'C1' }))?.upstreamId);
    expect(reqs[2]?.[2]).toBeDefined();
    expect(w.conn.contentsIn('C1')).toEqual(['You said: one', 'You said: two', 'You said: three']);
  });

  it('a trickling upstream: the reply ends at CHAT_REPLY_MAX_SECONDS with its text and a notice, the stream closed', async () => {
    const w = await world({ settings: { replyMaxSeconds: 1 } });
    // 200 chunks 50 ms apart: 10 s of upstream, far past the 1 s deadline.
    expect(await w.conn.send({ text: 'slow [long 2000] [chunks 200] [delay 50]' })).toEqual({ status: 'answered' });
    const shown = w.conn.contentsIn('C1').join('');
    expect(shown.endsWith(MESSAGES.replyDeadline(1))).toBe(true);
    const kept = shown.slice(0, -MESSAGES.replyDeadline(1).length);
    expect(kept.length).toBeGreaterThan(0);
    expect(replyText('slow [long 2000] [chunks 200] [delay 50]').startsWith(kept)).toBe(true);
    await expect.poll(() => w.emu.openStreams, { timeout: 3000 }).toBe(0);
    expect(w.relay.stats()).toEqual({ inFlight: 0, queued: 0 });
  });

  for (const streaming of [true, false]) {
    it(`an endless reply is cut at CHAT_REPLY_MAX_CHARS with a notice (streaming ${streaming ? 'on' : 'off'})`, async () => {
      const w = await world({ maxReplyChars: 500, settings: { streaming, replyMaxChars: 500 } });
      await w.conn.send({ text: 'big [long 20000] [chunks 40] [delay 1]' });
      const shown = w.conn.contentsIn('C1').join('');
      expect(shown.endsWith(MESSAGES.replyTooLong(500).trim())).toBe(true);
      if (streaming) {
        const kept = shown.slice(0, -MESSAGES.replyTooLong(500).length);
        // the first 500 characters, then (when the cut left a code block open) its closing fence
        expect(kept.startsWith(replyText('big [long 20000] [chunks 40] [delay 1]').slice(0, 500))).toBe(true);
        expect(kept.slice(500)).toMatch(/^(\n?`{3,})?$/);
      }
      await expect.poll(() => w.emu.openStreams, { timeout: 3000 }).toBe(0);
    });
  }

  it('with streaming off, replies come from the one-response endpoint as one final post', async () => {
    const w = await world({ settings: { streaming: false } });
    await w.conn.send({ text: 'whole' });
    expect(w.emu.requests.map((r) => r.endpoint)).toEqual(['send']);
    expect(w.conn.writes.map((x) => [x.op, x.text, x.final])).toEqual([['post', 'You said: whole', true]]);
  });

  it('an idle conversation gets a new upstream session and the user is told', async () => {
    const w = await world({ settings: { sessionIdleSeconds: 600 } });
    await w.conn.send({ text: 'early' });
    w.clock.offset += 601_000;
    await w.conn.send({ text: 'late' });
    const [a, b] = w.emu.requests.filter((r) => r.endpoint === 'stream');
    expect(b?.conversationId).not.toBe(a?.conversationId);
    expect(w.conn.contentsIn('C1')).toEqual(['You said: early', `${MESSAGES.renewed}You said: late`]);
  });

  it('reset starts a fresh conversation', async () => {
    const w = await world();
    await w.conn.send({ text: 'hello' });
    expect(await w.conn.send({ text: 'reset', mentionsBot: true })).toEqual({ status: 'reset' });
    await w.conn.send({ text: 'again' });
    const [a, b] = w.emu.requests.filter((r) => r.endpoint === 'stream');
    expect(b?.conversationId).not.toBe(a?.conversationId);
    expect(w.conn.contentsIn('C1')).toEqual(['You said: hello', MESSAGES.reset, 'You said: again']);
  });

  it('a restart keeps the mapping, and marks a reply left streaming as interrupted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'core-restart-'));
    open.push(async () => rmSync(dir, { recursive: true, force: true }));
    const dbPath = join(dir, 'bridge.db');
    const w1 = await world({ dbPath });
    await w1.conn.send({ text: 'before restart' });
    const before = w1.emu.requests.at(-1)?.conversationId;
    // A crash in the middle of a slow reply: the database stays as it was after the last write.
    const reply = w1.conn.send({ text: '[long 900] [chunks 30] [delay 40]', channelId: 'C7', eventId: 'crashing' });
    await w1.shown('crashing');
    // The record follows the platform write off the reply's path (a few microtasks later).
    await vi.waitFor(async () => expect((await w1.store.inflight.listOpen())[0]?.messageIds).toHaveLength(1));
    const [open1] = await w1.store.inflight.listOpen();
    const messageId = open1?.messageIds[0] as string;
    const atCrash = { ...(w1.conn.messages.get(messageId) as NonNullable<ReturnType<typeof w1.conn.messages.get>>) };
    const textAtCrash = atCrash.content;
    expect(textAtCrash).toBe(open1?.lastText);
    await w1.store.close();
    await w1.relay.drain(0); // the old process is gone; its writes after this go nowhere we look
    await reply;

    const w2 = await world({ dbPath });
    // The platform still has the message as it was at the crash: hand it to the new connector.
    w2.conn.messages.set(messageId, atCrash);
    expect(await w2.relay.recoverInterrupted([w2.conn])).toEqual({ repaired: 1, unrepairable: 0, failed: 0 });
    const repaired = w2.conn.messages.get(messageId)?.content as string;
    expect(repaired).toBe(`${textAtCrash}${MESSAGES.interrupted}`);
    expect(replyText('[long 900]').startsWith(textAtCrash)).toBe(true);
    expect(await w2.store.inflight.listOpen()).toEqual([]);
    // (a new connector counts event ids from 1 again: the persisted dedup would drop ev-1)
    expect(await w2.conn.send({ text: 'after restart', eventId: 'after-restart' })).toEqual({ status: 'answered' });
    expect(w2.emu.requests.map((r) => [r.message, r.conversationId])).toEqual([['after restart', before]]);
  });

  describe('errors the user sees', () => {
    const cases: Array<[string, WorldOptions, (w: World) => void, string]> = [
      [
        '429 beyond the retry budget',
        {},
        (w) => w.emu.injectFault({ status: 429, times: 50, retryAfterSeconds: 1 }),
        MESSAGES.busy,
      ],
      ['500 three times', {}, (w) => w.emu.injectFault({ status: 500, times: 3 }), MESSAGES.error],
      ['401', { apiKey: 'wrong-key' }, () => {}, MESSAGES.unavailable],
      ['400 MESSAGE_TOO_LONG', { emulator: { maxMessageChars: 5 } }, () => {}, MESSAGES.tooLong()],
      ['unknown bot', { botId: 'no-such-bot' }, () => {}, MESSAGES.unknownBot],
      ['other 4xx', {}, (w) => w.emu.injectFault({ status: 422, times: 1 }), MESSAGES.badRequest(422)],
    ];
    for (const [name, opts, arrange, shown] of cases) {
      it(`${name} → "${shown.slice(0, 40)}…"`, async () => {
        const w = await world(opts);
        arrange(w);
        expect(await w.conn.send({ text: 'question' })).toEqual({ status: 'failed' });
        expect(w.conn.contentsIn('C1')).toEqual([shown]);
      });
    }

    it('connection refused → the error message', async () => {
      const w = await world({ url: 'http://127.0.0.1:9' });
      expect(await w.conn.send({ text: 'question' })).toEqual({ status: 'failed' });
      expect(w.conn.contentsIn('C1')).toEqual([MESSAGES.error]);
    });

    it('over CHAT_MAX_MESSAGE_CHARS → too long, no upstream call', async () => {
      const w = await world({ settings: { maxMessageChars: 5 } });
      expect(await w.conn.send({ text: 'far too long' })).toEqual({ status: 'failed' });
      expect(w.conn.contentsIn('C1')).toEqual([MESSAGES.tooLong(5)]);
      expect(w.emu.requests).toHaveLength(0);
    });

    const midStream: Array<[string, string, string]> = [
      ['a stream error event', '[error 2] [chunks 6]', MESSAGES.streamError],
      ['a reset connection', '[cut 2] [chunks 6]', MESSAGES.interrupted],
      ['a stalled stream (idle timeout)', '[stall 2] [chunks 6]', MESSAGES.interrupted],
    ];
    for (const [name, directive, note] of midStream) {
      it(`${name} mid-stream keeps the text and adds a note`, async () => {
        const w = await world({ streamIdleTimeoutMs: 800 });
        const r = await w.conn.send({ text: directive });
        expect(['failed', 'interrupted']).toContain(r.status);
        const [content] = w.conn.contentsIn('C1');
        const full = replyText(directive);
        expect(content?.endsWith(note)).toBe(true);
        const shownText = (content as string).slice(0, -note.length);
        expect(shownText.length).toBeGreaterThan(0);
        expect(full.startsWith(shownText)).toBe(true);
      });
    }
  });
});
