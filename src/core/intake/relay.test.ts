import { describe, expect, it } from 'vitest';
import { FakeChat, type ScriptedReply } from '../../../test/fakes/fake-chat.js';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { TestConnector, type TestConnectorOptions } from '../../../test/fakes/test-connector.js';
import { silentLogger } from '../../logger.js';
import { ChatError } from '../chat-port.js';
import { MemoryFeedbackStore, openMemoryStore } from '../../../test/fakes/memory-store.js';
import { type BridgeMetrics, noopMetrics } from '../metrics-port.js';
import type { Connector, HandleResult, IncomingMessage, Place } from '../ports.js';
import { type BotRouter, createRelay, type RelaySettings } from './relay.js';
import { MESSAGES } from '../user-messages.js';
import { testRelaySettings } from '../../../test/fakes/relay-settings.js';

function setup(
  opts: {
    form?: 'a' | 'b';
    settings?: Partial<RelaySettings>;
    botFor?: BotRouter;
    metrics?: BridgeMetrics;
    connector?: TestConnectorOptions;
    feedback?: boolean;
  } = {},
) {
  const clock = new ManualClock();
  const chat = new FakeChat(opts.form ?? 'b');
  const store = openMemoryStore();
  const conn = new TestConnector({ clock, bucketLimit: 50, ...opts.connector });
  const relay = createRelay({
    chat,
    botFor: opts.botFor ?? (() => 'demo-bot'),
    conversations: store.conversations,
    events: store.events,
    inflight: store.inflight,
    ...(opts.feedback === true ? { feedback: new MemoryFeedbackStore() } : {}),
    metrics: opts.metrics ?? noopMetrics,
    logger: silentLogger,
    clock,
    settings: testRelaySettings({
      sessionIdleSeconds: 3600,
      userMessagesPerMinute: 100,
      maxConcurrentReplies: 8,
      streamEditIntervalMs: 1000,
      ...(opts.feedback === true ? { feedback: true } : {}),
      ...opts.settings,
    }),
  });
  void conn.start(relay);
  /** Move the clock until the promise settles. */
  const run = async <T>(p: Promise<T>, maxMs = 60_000): Promise<T> => {
    let done = false;
    void p.finally(() => (done = true)).catch(() => {});
    await clock.advanceUntil(() => done, maxMs, 100);
    return p;
  };
  const gate = () => {
    let open: () => void = () => {};
    const promise = new Promise<void>((r) => (open = r));
    return { promise, open };
  };
  return { clock, chat, store, conn, relay, run, gate };
}

const status = (s: HandleResult['status']) => ({ status: s });

describe('relay', () => {
  it('answers a message with the upstream reply and sends metadata without absent values', async () => {
    const { conn, chat, run } = setup();
    expect(await run(conn.send({ text: 'hello', userName: 'Ann' }))).toEqual(status('answered'));
    expect(conn.contentsIn('C1')).toEqual(['You said: hello']);
    expect(chat.requests[0]?.metadata).toEqual({
      source: 'test',
      channelId: 'C1',
      userId: 'U1',
      userName: 'Ann',
      messageId: 'm-1',
    });
    expect(chat.requests[0]?.botId).toBe('demo-bot');
  });

  it('ignores bots and empty text, refuses places outside the allowlists silently', async () => {
    const { conn, chat, relay, run } = setup({
      settings: {
        allow: { slack: { workspaces: ['T1'], channels: ['C1'] }, discord: { workspaces: [], channels: [] } },
      },
    });
    expect(await conn.send({ text: 'hi', isFromBot: true })).toEqual(status('ignored'));
    expect(await conn.send({ text: '   ' })).toEqual(status('ignored'));
    const slack = (workspaceId: string, channelId: string, threadId?: string): IncomingMessage => {
      const place: Place = { platform: 'slack', workspaceId, channelId, ...(threadId ? { threadId } : {}) };
      return conn.message({ text: 'hi', place, origin: { platform: 'slack', workspaceId, channelId } });
    };
    expect(await relay.handle(slack('T2', 'C1'))).toEqual(status('not_allowed'));
    expect(await relay.handle(slack('T1', 'C9'))).toEqual(status('not_allowed'));
    // a thread under an allowed channel is allowed
    expect(await run(relay.handle(slack('T1', 'C1', '171.1')))).toEqual(status('answered'));
    expect(chat.requests).toHaveLength(1);
    expect(conn.writes.map((w) => w.text)).toEqual(['You said: hi']);
  });

  it("asks the bot router which bot answers in the message's place", async () => {
    const asked: string[] = [];
    const { conn, chat, run } = setup({
      botFor: (place) => {
        asked.push(`${place.workspaceId ?? '-'}/${place.channelId}`);
        return place.channelId === 'C2' ? 'b2' : 'b1';
      },
    });
    await run(conn.send({ text: 'x', place: { platform: 'test', workspaceId: 'T1', channelId: 'C1' } }));
    await run(conn.send({ text: 'y', place: { platform: 'test', workspaceId: 'T1', channelId: 'C2' } }));
    expect(asked).toEqual(['T1/C1', 'T1/C2']);
    expect(chat.requests.map((r) => r.botId)).toEqual(['b1', 'b2']);
  });

  it('handles an event at most once', async () => {
    const { conn, chat, run } = setup();
    const results = await run(Promise.all([1, 2, 3].map(() => conn.send({ text: 'once', eventId: 'E1' }))));
    expect(results.map((r) => r.status).sort()).toEqual(['answered', 'duplicate', 'duplicate']);
    expect(chat.requests).toHaveLength(1);
    expect(conn.messagesIn('C1')).toHaveLength(1);
  });

  it('forgets dedup entries after 24 hours', async () => {
    const { conn, chat, clock, run } = setup({ settings: { sessionIdleSeconds: 10 * 86400 } });
    await run(conn.send({ text: 'x', eventId: 'E1' }));
    await clock.advance(23 * 3600_000);
    expect(await run(conn.send({ text: 'x', eventId: 'E1' }))).toEqual(status('duplicate'));
    await clock.advance(2 * 3600_000);
    await run(conn.send({ text: 'y', eventId: 'E2' }));
    expect(await run(conn.send({ text: 'x', eventId: 'E1' }))).toEqual(status('answered'));
    expect(chat.requests).toHaveLength(3);
  });

  it('reset in a DM starts a fresh conversation and confirms', async () => {
    const { conn, chat, run } = setup();
    await run(conn.send({ text: 'one', isDm: true, mentionsBot: false }));
    expect(await run(conn.send({ text: 'Reset', isDm: true, mentionsBot: false }))).toEqual(status('reset'));
    await run(conn.send({ text: 'two', isDm: true, mentionsBot: false }));
    expect(conn.contentsIn('C1')).toEqual(['You said: one', MESSAGES.reset, 'You said: two']);
    expect(chat.requests).toHaveLength(2);
    expect(chat.requests[0]?.conversationId).not.toBe(chat.requests[1]?.conversationId);
  });

  it('tells a user who writes too fast to slow down, and refuses too long messages, without upstream calls', async () => {
    const { conn, chat, run } = setup({ settings: { userMessagesPerMinute: 2, maxMessageChars: 10 } });
    await run(conn.send({ text: 'a' }));
    await run(conn.send({ text: 'b' }));
    expect(await run(conn.send({ text: 'c' }))).toEqual(status('user_rate_limited'));
    expect(await run(conn.send({ text: 'd', userId: 'U2', channelId: 'C2' }))).toEqual(status('answered'));
    expect(await run(conn.send({ text: 'x'.repeat(11), userId: 'U3', channelId: 'C3' }))).toEqual(status('failed'));
    expect(chat.requests.map((r) => r.message)).toEqual(['a', 'b', 'd']);
    expect(conn.contentsIn('C1').at(-1)).toBe(MESSAGES.slowDown);
    expect(conn.contentsIn('C3')).toEqual([MESSAGES.tooLong(10)]);
  });

  it('files: a message of files only is answered; text within CHAT_MAX_MESSAGE_CHARS; skipped files told first', async () => {
    const { conn, chat, run } = setup({ settings: { maxMessageChars: 70 } });
    const files = [
      { name: 'a.txt', type: 'text/plain', size: 2, text: 'hi' },
      { name: 'long.txt', type: 'text/plain', size: 80, text: 'z'.repeat(80) },
      { name: 'p.png', type: 'image/png', size: 2000 },
    ];
    expect(await run(conn.send({ text: '', attachments: files }))).toEqual(status('answered'));
    const sent = chat.requests[0]?.message ?? '';
    expect(sent.length).toBeLessThanOrEqual(70);
    expect(sent).toBe('File: a.txt\n```txt\nhi\n```\n\n[attached: p.png (image/png, 2 kB)]');
    expect(chat.requests[0]?.metadata?.attachments).toEqual([{ name: 'p.png', type: 'image/png', size: 2000 }]);
    const shown = conn.contentsIn('C1');
    expect(shown[0]).toBe('One file was not passed to the assistant: long.txt (too long for the message).');
    expect(shown[1]).toBe(`You said: ${sent}`);
    // No text and no file: still nothing to answer.
    expect(await run(conn.send({ text: ' ', attachments: [] }))).toEqual(status('ignored'));
  });

  it('answers one place in arrival order, one call at a time, in one conversation; a full queue is told', async () => {
    const { conn, chat, run, gate } = setup({ settings: { maxQueuePerPlace: 2 } });
    const g = gate();
    chat.script = (req, n) => ({ chunks: [`r${req.message}`, '!'], ...(n === 1 ? { gate: g.promise } : {}) });
    const ps = ['1', '2', '3'].map((t) => conn.send({ text: t }));
    const full = await run(conn.send({ text: '4' }));
    expect(full).toEqual(status('queue_full'));
    await run(Promise.resolve(), 500);
    expect(chat.requests).toHaveLength(1);
    g.open();
    expect((await run(Promise.all(ps))).map((r) => r.status)).toEqual(['answered', 'answered', 'answered']);
    expect(chat.requests.map((r) => r.message)).toEqual(['1', '2', '3']);
    expect(new Set(chat.requests.map((r) => r.conversationId)).size).toBe(1);
    expect(conn.contentsIn('C1')).toEqual([MESSAGES.queueFull, 'r1!', 'r2!', 'r3!']);
  });

  it('keeps at most MAX_CONCURRENT_REPLIES upstream calls in flight', async () => {
    const { conn, chat, relay, run, gate } = setup({ settings: { maxConcurrentReplies: 2 } });
    const g = gate();
    chat.script = (req) => ({ chunks: [req.message, '.'], gate: g.promise });
    const ps = ['A', 'B', 'C', 'D'].map((c) => conn.send({ text: c, channelId: c }));
    await run(Promise.resolve(), 500);
    expect(chat.requests).toHaveLength(2);
    expect(relay.stats()).toEqual({ inFlight: 2, queued: 2 });
    g.open();
    await run(Promise.all(ps));
    expect(chat.requests).toHaveLength(4);
    expect(relay.stats()).toEqual({ inFlight: 0, queued: 0 });
  });

  const errorRows: Array<[string, ScriptedReply, string]> = [
    ['rate_limited', { refuse: new ChatError('rate_limited', '429') }, MESSAGES.busy],
    ['server', { refuse: new ChatError('server', '500', { status: 500 }) }, MESSAGES.error],
    ['network', { refuse: new ChatError('network', 'ECONNREFUSED') }, MESSAGES.error],
    ['timeout', { refuse: new ChatError('timeout', 'timeout') }, MESSAGES.error],
    ['unauthorized', { refuse: new ChatError('unauthorized', '401', { status: 401 }) }, MESSAGES.unavailable],
    ['too_long', { refuse: new ChatError('too_long', '400', { status: 400 }) }, MESSAGES.tooLong()],
    ['unknown_bot', { refuse: new ChatError('unknown_bot', '404', { status: 404 }) }, MESSAGES.unknownBot],
    ['bad_request', { refuse: new ChatError('bad_request', '422', { status: 422 }) }, MESSAGES.badRequest(422)],
    [
      'stream_error',
      { chunks: ['Some text'], failAfter: new ChatError('stream_error', 'bad') },
      `Some text${MESSAGES.streamError}`,
    ],
    [
      'interrupted',
      { chunks: ['Some text'], failAfter: new ChatError('interrupted', 'cut', { partial: true }) },
      `Some text${MESSAGES.interrupted}`,
    ],
  ];
  for (const [kind, reply, shown] of errorRows) {
    it(`shows "${shown.slice(0, 30)}…" for ${kind}`, async () => {
      const { conn, chat, store, run } = setup();
      chat.script = () => reply;
      const r = await run(conn.send({ text: 'q' }));
      expect(r.status).toBe(kind === 'interrupted' ? 'interrupted' : 'failed');
      expect(conn.contentsIn('C1')).toEqual([shown]);
      expect(chat.requests).toHaveLength(1); // no retry by the relay
      expect(store.inflight.all().map((x) => x.state)).toEqual([kind === 'interrupted' ? 'interrupted' : 'failed']);
    });
  }

  it('renews a conversation the upstream forgot, sends the message once more, and says so', async () => {
    const { conn, chat, run } = setup();
    await run(conn.send({ text: 'first' }));
    chat.script = (req, n) =>
      n === 2
        ? { refuse: new ChatError('conversation_gone', '410', { status: 410 }) }
        : { chunks: [`You said: ${req.message}`] };
    expect(await run(conn.send({ text: 'second' }))).toEqual(status('answered'));
    const [a, b, c] = chat.requests;
    expect(b?.conversationId).toBe(a?.conversationId);
    expect(c?.conversationId).not.toBe(a?.conversationId);
    expect(c?.message).toBe('second');
    expect(conn.contentsIn('C1').at(-1)).toBe(`${MESSAGES.renewed}You said: second`);
  });

  it('renews an idle conversation', async () => {
    const { conn, chat, clock, run } = setup({ settings: { sessionIdleSeconds: 60 } });
    await run(conn.send({ text: 'first' }));
    await clock.advance(61_000);
    await run(conn.send({ text: 'later' }));
    expect(chat.requests[1]?.conversationId).not.toBe(chat.requests[0]?.conversationId);
    expect(conn.contentsIn('C1').at(-1)).toBe(`${MESSAGES.renewed}You said: later`);
  });

  it('Form A: keeps the id the first reply names; without ids in streams, first turns use send', async () => {
    const { conn, chat, run } = setup({ form: 'a' });
    await run(conn.send({ text: 'one' }));
    await run(conn.send({ text: 'two' }));
    expect(chat.requests.map((r) => [r.endpoint, r.conversationId])).toEqual([
      ['stream', undefined],
      ['stream', 'conv-1'],
    ]);
    chat.script = (req) => ({ chunks: [`You said: ${req.message}`], ids: 'none' });
    await run(conn.send({ text: 'new place', channelId: 'C2' }));
    await run(conn.send({ text: 'again', channelId: 'C2' }));
    await run(conn.send({ text: 'more', channelId: 'C2' }));
    expect(chat.requests.slice(2).map((r) => [r.endpoint, r.conversationId])).toEqual([
      ['stream', undefined],
      ['send', undefined],
      ['stream', 'conv-3'],
    ]);
  });

  it('uses send when streaming is off', async () => {
    const { conn, chat, run } = setup({ settings: { streaming: false } });
    await run(conn.send({ text: 'hi' }));
    expect(chat.requests.map((r) => r.endpoint)).toEqual(['send']);
    expect(conn.writes.map((w) => [w.op, w.text, w.final])).toEqual([['post', 'You said: hi', true]]);
  });

  it('a draining replica says nothing about a retry of an event already taken', async () => {
    const { conn, relay, run } = setup();
    expect(await run(conn.send({ text: 'hi', eventId: 'ev-taken' }))).toEqual(status('answered'));
    const drained = relay.drain(1000);
    expect(await run(conn.send({ text: 'hi', eventId: 'ev-taken', channelId: 'C2' }))).toEqual(status('duplicate'));
    expect(conn.contentsIn('C2')).toEqual([]);
    await drained;
  });

  it('drain refuses new messages, interrupts replies still running after the timeout', async () => {
    const { conn, chat, relay, clock, run, gate, store } = setup();
    chat.script = () => ({ chunks: ['Started', ' never'], gate: gate().promise });
    const p = conn.send({ text: 'slow' });
    await run(Promise.resolve(), 300);
    const drained = relay.drain(1000);
    // Not taken (a platform retry may still be answered), and not dropped unseen either.
    expect(await run(conn.send({ text: 'late', channelId: 'C2' }))).toEqual(status('interrupted'));
    expect(conn.contentsIn('C2')).toEqual([MESSAGES.restarting]);
    await clock.advanceUntil(() => false, 3000, 100);
    await drained;
    expect(await p).toEqual(status('interrupted'));
    expect(conn.contentsIn('C1')).toEqual([`Started${MESSAGES.interrupted}`]);
    expect(chat.cancelled).toBe(1);
    expect(await store.inflight.listOpen()).toEqual([]);
  });

  it('recoverInterrupted edits replies a crash left streaming and closes their records', async () => {
    const { conn, relay, store } = setup();
    const target = { place: { platform: 'test' as const, channelId: 'C1' } };
    const posted = await conn.sink({ platform: 'test', channelId: 'C1' }).post('Half a rep', { final: false, part: 0 });
    const id = await store.inflight.begin({ platform: 'test', eventId: 'e1', target, at: 1 });
    await store.inflight.progress(id, [posted.messageId], 'Half a rep', 2);
    await store.inflight.begin({ platform: 'test', eventId: 'e2', target, at: 1 }); // nothing posted yet
    expect(await relay.recoverInterrupted([conn])).toEqual({ repaired: 2, unrepairable: 0, failed: 0 });
    // The reply that had shown nothing is not left silent: its place is told to try again.
    expect(conn.contentsIn('C1')).toEqual([`Half a rep${MESSAGES.interrupted}`, MESSAGES.interruptedBeforeText]);
    expect(await store.inflight.listOpen()).toEqual([]);
  });

  it('recoverInterrupted counts a connector with no way to tell apart from repairs and failures', async () => {
    const interrupted: string[] = [];
    const { conn, relay, store } = setup({
      metrics: { ...noopMetrics, replyInterrupted: (platform) => interrupted.push(platform) },
    });
    // The test connector without postInterrupted, as a platform that cannot post a note.
    const noNotes: Connector = {
      platform: 'test',
      start: (h) => conn.start(h),
      shutdown: () => conn.shutdown(),
      isReady: () => conn.isReady(),
      markInterrupted: (t, messageId, text) => conn.markInterrupted(t, messageId, text),
    };
    const target = { place: { platform: 'test' as const, channelId: 'C1' } };
    const posted = await conn.sink(target.place).post('Half a rep', { final: false, part: 0 });
    const shown = await store.inflight.begin({ platform: 'test', eventId: 'e1', target, at: 1 });
    await store.inflight.progress(shown, [posted.messageId], 'Half a rep', 2);
    await store.inflight.begin({ platform: 'test', eventId: 'e2', target, at: 1 }); // nothing posted yet
    const gone = await store.inflight.begin({ platform: 'test', eventId: 'e3', target, at: 1 });
    await store.inflight.progress(gone, ['deleted-on-the-platform'], 'Lost', 2);
    expect(await relay.recoverInterrupted([noNotes])).toEqual({ repaired: 1, unrepairable: 1, failed: 1 });
    expect(conn.contentsIn('C1')).toEqual([`Half a rep${MESSAGES.interrupted}`]);
    expect(interrupted).toEqual(['test']);
    expect(await store.inflight.listOpen()).toEqual([]);
  });
});

describe('relay: stop and feedback', () => {
  const until = (cond: () => boolean) =>
    new Promise<void>((resolve) => {
      const tick = () => (cond() ? resolve() : setImmediate(tick));
      tick();
    });

  it('only the asker stops a reply: text so far, the note, the upstream cancelled, counted', async () => {
    const stopped: string[] = [];
    const { conn, chat, relay, run, gate } = setup({
      metrics: { ...noopMetrics, replyStopped: (p) => stopped.push(p) },
    });
    chat.script = () => ({ chunks: ['Started', ' never'], gate: gate().promise });
    const reply = conn.send({ text: 'slow', userId: 'U1' });
    await run(until(() => conn.writes.length > 0));
    const key = conn.writes[0]?.replyKey ?? '';
    expect(key).not.toBe('');
    expect(conn.writes[0]).toMatchObject({ final: false });
    expect(await relay.stop(key, 'U2')).toBe('not_owner');
    expect(await relay.stop(key, 'U1')).toBe('stopped');
    expect(await run(reply)).toEqual(status('answered'));
    expect(conn.contentsIn('C1')).toEqual([`Started${MESSAGES.stopped}`]);
    expect(conn.writes.at(-1)).toMatchObject({ final: true, last: true, replyKey: key });
    expect(chat.cancelled).toBe(1);
    expect(stopped).toEqual(['test']);
    expect(await relay.stop(key, 'U1')).toBe('not_found');
  });

  it('"stop" from the asker stops their reply in the place; from another user it is a message', async () => {
    const { conn, chat, run, gate } = setup();
    const gated = gate();
    chat.script = (req) => (req.message === 'slow' ? { chunks: ['Started', ' never'], gate: gated.promise } : {});
    const reply = conn.send({ text: 'slow', userId: 'U1' });
    await run(until(() => conn.writes.length > 0));
    const other = conn.send({ text: 'stop', userId: 'U2' });
    expect(await run(conn.send({ text: 'STOP', userId: 'U1' }))).toEqual(status('stopped'));
    expect(await run(reply)).toEqual(status('answered'));
    expect(await run(other)).toEqual(status('answered'));
    expect(chat.requests.map((r) => r.message)).toEqual(['slow', 'stop']);
    expect(conn.contentsIn('C1')[0]).toBe(`Started${MESSAGES.stopped}`);
  });

  it('feedback: the last write asks for buttons; a vote goes upstream once with the next message', async () => {
    const votes: string[] = [];
    const { conn, chat, relay, run } = setup({
      feedback: true,
      metrics: { ...noopMetrics, feedbackVote: (_p, v) => votes.push(v) },
    });
    await run(conn.send({ text: 'hello', userId: 'U1' }));
    const last = conn.writes.at(-1);
    expect(last).toMatchObject({ final: true, last: true, feedback: true });
    const key = last?.replyKey ?? '';
    expect(await relay.vote(key, 'U1', 'up')).toBe('recorded');
    expect(await relay.vote(key, 'U1', 'down')).toBe('recorded');
    expect(await relay.vote('unknown', 'U1', 'up')).toBe('not_found');
    expect(votes).toEqual(['up', 'down']);
    await run(conn.send({ text: 'again', userId: 'U2' }));
    await run(conn.send({ text: 'more', userId: 'U1' }));
    await run(conn.send({ text: 'and more', userId: 'U1' }));
    const meta = chat.requests.map((r) => r.metadata?.feedback);
    expect(meta[1]).toBeUndefined(); // another user's message
    expect(meta[2]).toEqual([{ messageId: last?.messageId, vote: 'down', at: expect.any(String) }]);
    expect(meta[3]).toBeUndefined();
  });
});

describe('relay bounds (hostile upstream, overload, storage faults)', () => {
  it('ends a reply at CHAT_REPLY_MAX_SECONDS with the text so far and aborts the upstream', async () => {
    const { conn, chat, relay, run, gate } = setup({ settings: { replyMaxSeconds: 5 } });
    chat.script = () => ({ chunks: ['Started', ' never'], gate: gate().promise });
    expect(await run(conn.send({ text: 'slow' }))).toEqual(status('answered'));
    expect(conn.contentsIn('C1')).toEqual([`Started${MESSAGES.replyDeadline(5)}`]);
    expect(chat.cancelled).toBe(1);
    expect(relay.stats()).toEqual({ inFlight: 0, queued: 0 });
  });

  it('ends a capped reply with a notice, streamed or not', async () => {
    const { conn, chat, run } = setup({ settings: { replyMaxChars: 3 } });
    chat.script = () => ({ chunks: ['abc'], endReason: 'too_long' });
    await run(conn.send({ text: 'long' }));
    expect(conn.contentsIn('C1')).toEqual([`abc${MESSAGES.replyTooLong(3)}`]);

    const oneShot = setup({ settings: { replyMaxChars: 3, streaming: false } });
    oneShot.chat.script = () => ({ chunks: [], endReason: 'too_long' });
    await oneShot.run(oneShot.conn.send({ text: 'long' }));
    expect(oneShot.conn.contentsIn('C1')).toEqual([MESSAGES.replyTooLong(3).trim()]);
  });

  it('beyond MAX_QUEUED_REPLIES tells the user at once and leaves the event unseen', async () => {
    const { conn, chat, run, gate } = setup({ settings: { maxConcurrentReplies: 1, maxQueuedReplies: 2 } });
    const g = gate();
    chat.script = (req) => ({ chunks: [req.message, '.'], gate: g.promise });
    const ps = ['A', 'B', 'C'].map((c) => conn.send({ text: c, channelId: c }));
    await run(Promise.resolve(), 300);
    expect(await run(conn.send({ text: 'D', channelId: 'D', eventId: 'E-D' }))).toEqual(status('queue_full'));
    expect(conn.contentsIn('D')).toEqual([MESSAGES.overloaded]);
    g.open();
    await run(Promise.all(ps));
    // The same event delivered again (a platform retry) is answered: it was never marked seen.
    expect(await run(conn.send({ text: 'D', channelId: 'D', eventId: 'E-D' }))).toEqual(status('answered'));
    expect(chat.requests.map((r) => r.message)).toEqual(['A', 'B', 'C', 'D']);
  });

  it('releases the upstream slot when the upstream ends, while the final write still waits for budget', async () => {
    const { conn, chat, run, gate } = setup({
      settings: { maxConcurrentReplies: 1 },
      connector: { bucketLimit: 1, bucketWindowMs: 10_000 },
    });
    const g = gate();
    chat.script = (req) => ({
      chunks: [`${req.message}1`, `${req.message}2`],
      ...(req.message === 'a' ? { gate: g.promise } : {}),
    });
    const first = conn.send({ text: 'a', channelId: 'C1' });
    const second = conn.send({ text: 'b', channelId: 'C2' });
    await run(Promise.resolve(), 500);
    expect(conn.contentsIn('C1')).toEqual(['a1']);
    expect(chat.requests.map((r) => r.message)).toEqual(['a']);
    g.open();
    await run(Promise.resolve(), 500);
    // C1's final edit waits ~10 s for its bucket; C2's upstream call did not wait for it.
    expect(chat.requests.map((r) => r.message)).toEqual(['a', 'b']);
    expect(conn.contentsIn('C1')).toEqual(['a1']);
    await run(Promise.all([first, second]));
    expect(conn.contentsIn('C1')).toEqual(['a1a2']);
    expect(conn.contentsIn('C2')).toEqual(['b1b2']);
  });

  it('at shutdown, a message still waiting for a slot is told the bridge is restarting', async () => {
    const { conn, chat, relay, clock, run, gate } = setup({ settings: { maxConcurrentReplies: 1 } });
    chat.script = (req) => ({ chunks: [req.message, ' never'], gate: gate().promise });
    const running = conn.send({ text: 'Started', channelId: 'C1' });
    const waiting = conn.send({ text: 'queued', channelId: 'C2' });
    await run(Promise.resolve(), 300);
    const drained = relay.drain(1000);
    await clock.advanceUntil(() => false, 3000, 100);
    await drained;
    expect((await Promise.all([running, waiting])).map((r) => r.status)).toEqual(['interrupted', 'interrupted']);
    expect(conn.contentsIn('C1')).toEqual([`Started${MESSAGES.interrupted}`]);
    expect(conn.contentsIn('C2')).toEqual([MESSAGES.restarting]);
    expect(chat.requests.map((r) => r.message)).toEqual(['Started']);
  });

  it('a store that cannot be written for longer than the hold: the user gets a notice, the upstream no call', async () => {
    // (Shorter outages are held and answered: store-hold.test.ts.)
    const { conn, chat, store, run } = setup({ settings: { holdMaxSeconds: 20 } });
    const unavailable = () => {
      throw Object.assign(new Error('attempt to write a readonly database'), { code: 'STORE_UNAVAILABLE' });
    };
    const recordDelivery = store.events.recordDelivery.bind(store.events);
    store.events.recordDelivery = unavailable;
    expect(await run(conn.send({ text: 'hi', channelId: 'C1' }))).toEqual(status('failed'));
    store.events.recordDelivery = recordDelivery;
    store.inflight.begin = unavailable;
    expect(await run(conn.send({ text: 'hi', channelId: 'C2' }))).toEqual(status('failed'));
    expect(conn.contentsIn('C1')).toEqual([MESSAGES.storageDown]);
    expect(conn.contentsIn('C2')).toEqual([MESSAGES.storageDown]);
    expect(chat.requests).toHaveLength(0);
  });
});
