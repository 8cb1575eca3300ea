import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../src/core/user-messages.js';
import { splitText } from '../../src/emulator/replies.js';
import { type CoreHarness, startCore, waitFor } from './harness.js';

// Upstream faults through the whole core: the relay, the real upstream client over loopback, the
// emulator answering with the fault, the reply writer, the test connector. Each test asserts what
// the user finally sees in the channel and how many requests reached the upstream; after each
// fault, the next message in the same place is answered normally.

const echo = (text: string) => `You said: ${text}`;

/** The text of the first `n` pieces of an echo streamed in `k` pieces (the emulator's own split). */
const firstPieces = (text: string, k: number, n: number) => splitText(echo(text), k).slice(0, n).join('');

for (const form of ['a', 'b'] as const) {
  describe(`Form ${form.toUpperCase()}: upstream errors before the reply`, () => {
    let h: CoreHarness;
    let place = 0;
    let channel = 'C0';
    beforeAll(async () => {
      h = await startCore({ form, emulator: { maxMessageChars: 200 } });
    });
    afterAll(async () => {
      await h?.close();
    });
    beforeEach(() => {
      h.emu.clearFaults();
      h.emu.requests.length = 0;
      h.waits.length = 0;
      channel = `C${++place}`;
    });

    /** Send in this test's channel; resolves when the reply is complete. */
    const say = (text: string) =>
      h.conn.send({ text, channelId: channel, place: { platform: 'test', channelId: channel } });
    const shown = () => h.conn.contentsIn(channel);

    /** The next message in the place is answered; `firstAnswered`: the faulted one got its reply in the end. */
    async function recovers(firstAnswered = false) {
      const before = h.upstreamCalls();
      expect(await say('and now?')).toEqual({ status: 'answered' });
      expect(shown().at(-1)).toBe(echo('and now?'));
      expect(h.upstreamCalls()).toBe(before + 1);
      // Form B: the same session the bridge chose for the place. Form A: the conversation the
      // first message made, or, when it was refused, none yet (this one starts it).
      const follow = h.emu.requests.at(-1);
      if (form === 'b') expect(follow?.conversationId).toBe(h.emu.requests[0]?.conversationId);
      else if (!firstAnswered) expect(follow?.conversationId).toBeUndefined();
      else
        expect(h.emu.conversation(follow?.conversationId ?? '')?.messages[0]?.content).toBe(h.emu.requests[0]?.message);
    }

    it('429 twice with Retry-After 2: waits 2 s twice (as told), then the reply, exact; 3 requests', async () => {
      h.emu.injectFault({ status: 429, times: 2, retryAfterSeconds: 2 });
      expect(await say('hello there')).toEqual({ status: 'answered' });
      expect(shown()).toEqual([echo('hello there')]);
      expect(h.upstreamCalls()).toBe(3);
      expect(h.waits).toEqual([2000, 2000]);
      await recovers(true);
    });

    it('429 beyond the 30 s budget: the user is told the assistant is busy; 4 requests, 30 s waited in all', async () => {
      h.emu.injectFault({ status: 429, times: 50, retryAfterSeconds: 10 });
      expect(await say('are you there')).toEqual({ status: 'failed' });
      expect(shown()).toEqual([MESSAGES.busy]);
      expect(h.upstreamCalls()).toBe(4);
      expect(h.waits).toEqual([10_000, 10_000, 10_000]);
      h.emu.clearFaults();
      await recovers();
    });

    it('500 twice: retried with backoff, then the reply, exact; 3 requests', async () => {
      h.emu.injectFault({ status: 500, times: 2 });
      expect(await say('try hard')).toEqual({ status: 'answered' });
      expect(shown()).toEqual([echo('try hard')]);
      expect(h.upstreamCalls()).toBe(3);
      expect(h.waits).toHaveLength(2);
      for (const w of h.waits) expect(w).toBeLessThan(8_000);
      await recovers(true);
    });

    it('500 three times: the error message; exactly 3 requests', async () => {
      h.emu.injectFault({ status: 500, times: 3 });
      expect(await say('fail please')).toEqual({ status: 'failed' });
      expect(shown()).toEqual([MESSAGES.error]);
      expect(h.upstreamCalls()).toBe(3);
      await recovers();
    });

    it('503 once then fine: retried like a 500', async () => {
      h.emu.injectFault({ status: 503, times: 1 });
      expect(await say('flaky')).toEqual({ status: 'answered' });
      expect(shown()).toEqual([echo('flaky')]);
      expect(h.upstreamCalls()).toBe(2);
    });

    it('401: no retry; the user is told the assistant is unavailable; 1 request', async () => {
      h.emu.injectFault({ status: 401, times: 1 });
      expect(await say('who am i')).toEqual({ status: 'failed' });
      expect(shown()).toEqual([MESSAGES.unavailable]);
      expect(h.upstreamCalls()).toBe(1);
      expect(h.waits).toEqual([]);
      await recovers();
    });

    it('the upstream says the message is too long: the user is told so; 1 request, no retry', async () => {
      expect(await say('x'.repeat(300))).toEqual({ status: 'failed' });
      expect(shown()).toEqual([MESSAGES.tooLong()]);
      expect(h.upstreamCalls()).toBe(1);
      await recovers();
    });

    it('the bot does not exist upstream: the place is told it is routed to a bot that does not exist', async () => {
      h.emu.setOptions({ bots: ['another-bot'] });
      try {
        expect(await say('anyone?')).toEqual({ status: 'failed' });
      } finally {
        h.emu.setOptions({ bots: ['demo-bot'] });
      }
      expect(shown()).toEqual([MESSAGES.unknownBot]);
      expect(h.upstreamCalls()).toBe(1);
      await recovers();
    });

    it('another 4xx (403): an error message naming the status, no retry', async () => {
      h.emu.injectFault({ status: 403, times: 1 });
      expect(await say('forbidden?')).toEqual({ status: 'failed' });
      expect(shown()).toEqual([MESSAGES.badRequest(403)]);
      expect(h.upstreamCalls()).toBe(1);
    });
  });

  describe(`Form ${form.toUpperCase()}: faults at random points of a stream`, () => {
    let h: CoreHarness;
    let place = 0;
    beforeAll(async () => {
      // A short idle timeout for the stalls; everything else streams quickly.
      h = await startCore({ form, client: { streamIdleTimeoutMs: 400 } });
    });
    afterAll(async () => {
      await h?.close();
    });

    // Seeded: which fault, after how many of how many pieces.
    const cases = fc.sample(
      fc.record({
        fault: fc.constantFrom('cut', 'stall', 'error'),
        pieces: fc.integer({ min: 1, max: 12 }),
        at: fc.nat(12),
      }),
      { numRuns: 18, seed: form === 'a' ? 1101 : 1102 },
    );

    it.each(cases.map((c, i) => [i, c.fault, Math.min(c.at, c.pieces), c.pieces] as const))(
      'case %i: %s after piece %i of %i → the text so far + the right note (or message); one request; the place goes on',
      async (_i, fault, n, k) => {
        const channel = `S${++place}`;
        const say = (text: string) =>
          h.conn.send({ text, channelId: channel, place: { platform: 'test', channelId: channel } });
        h.emu.requests.length = 0;
        const text = `tell me something [chunks ${k}] [${fault} ${n}]`;
        const started = Date.now();
        const res = await say(text);
        const elapsed = Date.now() - started;
        const sofar = firstPieces(text, k, n);
        const shown = h.conn.contentsIn(channel);
        const all = echo(text);

        if (fault === 'error') {
          expect(res.status).toBe('failed');
          // An error after the whole text: still an error note (the upstream said the reply failed).
          expect(shown).toEqual([sofar === '' ? MESSAGES.error : sofar + MESSAGES.streamError]);
        } else if (n >= k) {
          // The whole text came, then the connection died before the end event.
          expect(res.status).toBe('interrupted');
          expect(shown).toEqual([all + MESSAGES.interrupted]);
        } else {
          expect(res.status).toBe('interrupted');
          expect(shown).toEqual([sofar === '' ? MESSAGES.interruptedBeforeText : sofar + MESSAGES.interrupted]);
        }
        if (fault === 'stall') {
          // the idle timeout (400 ms) ended it: not sooner (a lower bound: slowness only adds), and
          // end-to-end bound, reason: a retry or a second idle period after the response started
          // would not end it within the 4 s the shared machine is given here
          expect(elapsed).toBeGreaterThanOrEqual(380);
          expect(elapsed).toBeLessThan(4_000);
        }
        // No retry once the response started.
        expect(h.upstreamCalls()).toBe(1);
        await waitFor(() => h.emu.openStreams === 0, 5_000, 'the faulted stream to be closed');
        expect(h.conn.violations).toEqual([]);

        expect(await say('still there?')).toEqual({ status: 'answered' });
        expect(h.conn.contentsIn(channel).at(-1)).toBe(echo('still there?'));
        // ...in the same upstream conversation as the broken reply (its id came before the fault)
        const follow = h.emu.requests.at(-1);
        expect(h.emu.requests).toHaveLength(2);
        if (form === 'b') expect(follow?.conversationId).toBe(h.emu.requests[0]?.conversationId);
        else expect(h.emu.conversation(follow?.conversationId ?? '')?.messages[0]?.content).toBe(text);
      },
    );
  });
}

describe('the upstream cannot be reached', () => {
  let h: CoreHarness;
  beforeAll(async () => {
    // A port that was just free: connections are refused.
    const check = await startCore();
    const url = check.emu.url;
    await check.close();
    h = await startCore({ url });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('connection refused: 3 tries with backoff, then the error message', async () => {
    expect(await h.conn.send({ text: 'hello?' })).toEqual({ status: 'failed' });
    expect(h.conn.contentsIn('C1')).toEqual([MESSAGES.error]);
    expect(h.waits).toHaveLength(2);
  });
});

describe('CHAT_MAX_MESSAGE_CHARS', () => {
  let h: CoreHarness;
  beforeAll(async () => {
    h = await startCore({ settings: { maxMessageChars: 50 } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a longer message is refused locally with the limit in the message, and no upstream call', async () => {
    await h.conn.send({ text: 'y'.repeat(51) });
    expect(h.conn.contentsIn('C1')).toEqual([MESSAGES.tooLong(50)]);
    expect(h.upstreamCalls()).toBe(0);
    await h.conn.send({ text: 'y'.repeat(50) });
    expect(h.conn.contentsIn('C1').at(-1)).toBe(echo('y'.repeat(50)));
    expect(h.upstreamCalls()).toBe(1);
  });
});
