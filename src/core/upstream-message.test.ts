import { describe, expect, it } from 'vitest';
import type { ContextMessage } from './chat-port.js';
import { composeMessage, fewerContext, TRANSCRIPT_END, TRANSCRIPT_START } from './upstream-message.js';

const entry = (i: number, text = `message ${i}`): ContextMessage => ({
  author: i % 2 === 0 ? 'Ann' : 'bridge',
  role: i % 2 === 0 ? 'user' : 'assistant',
  text,
  ts: new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString(),
});
const history = (n: number) => Array.from({ length: n }, (_, i) => entry(i));

describe('composeMessage', () => {
  it('puts a delimited transcript, oldest first, before the user words, and the same list in metadata', () => {
    const context = history(3);
    const out = composeMessage({ userText: 'what now?', context, mode: 'message', maxContextChars: 6000 });
    expect(out.message).toBe(
      [
        TRANSCRIPT_START,
        'Ann: message 0',
        'bridge (assistant): message 1',
        'Ann: message 2',
        TRANSCRIPT_END,
        '',
        'what now?',
      ].join('\n'),
    );
    expect(out.metadata.context).toEqual(context);
    expect(out.included).toEqual(context);
  });

  it('metadata mode leaves the message alone; off and an empty context send only the user words', () => {
    const context = history(2);
    const meta = composeMessage({ userText: 'hi', context, mode: 'metadata', maxContextChars: 6000 });
    expect(meta).toEqual({ message: 'hi', metadata: { context }, included: context });
    for (const o of [
      { context, mode: 'off' as const },
      { context: [], mode: 'message' as const },
    ]) {
      expect(composeMessage({ userText: 'hi', maxContextChars: 6000, ...o })).toEqual({
        message: 'hi',
        metadata: {},
        included: [],
      });
    }
  });

  it('keeps the newest messages within CONTEXT_MAX_CHARS, dropping the oldest', () => {
    const context = Array.from({ length: 10 }, (_, i) => entry(i, `${i}`.repeat(100)));
    const out = composeMessage({ userText: 'q', context, mode: 'metadata', maxContextChars: 350 });
    expect(out.included.map((m) => m.text[0])).toEqual(['7', '8', '9']);
  });

  it('fits the whole message into CHAT_MAX_MESSAGE_CHARS and never cuts the user words', () => {
    const context = Array.from({ length: 10 }, (_, i) => entry(i, `${i}`.repeat(100)));
    const userText = 'u'.repeat(300);
    const out = composeMessage({ userText, context, mode: 'message', maxContextChars: 6000, maxMessageChars: 800 });
    expect(out.message.length).toBeLessThanOrEqual(800);
    expect(out.message.endsWith(`\n\n${userText}`)).toBe(true);
    expect(out.included.length).toBeGreaterThan(0);
    expect(out.included.at(-1)?.text).toBe('9'.repeat(100));
    // No room at all for context: the user's words alone.
    const tight = composeMessage({ userText, context, mode: 'message', maxContextChars: 6000, maxMessageChars: 300 });
    expect(tight).toEqual({ message: userText, metadata: {}, included: [] });
  });

  it('cuts a newest message that alone is longer than the budget, rather than sending nothing', () => {
    const out = composeMessage({
      userText: 'q',
      context: [entry(0, 'a'.repeat(50)), entry(2, 'b'.repeat(1000))],
      mode: 'message',
      maxContextChars: 200,
    });
    expect(out.included).toHaveLength(1);
    expect(out.included[0]?.text).toBe(`${'b'.repeat(199)}…`);
  });
});

describe('fewerContext', () => {
  it('drops the oldest half, and the last one entirely', () => {
    const h = history(12);
    expect(fewerContext(h)).toEqual(h.slice(6));
    expect(fewerContext(history(3))).toEqual(history(3).slice(2));
    expect(fewerContext(history(1))).toEqual([]);
  });
});
