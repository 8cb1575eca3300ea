import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ChatError } from '../core/chat-port.js';
import { type Emulator, startEmulator } from '../emulator/index.js';
import { collect, TEST_KEY, testClient, tinyServer } from '../../test/support/upstream.js';
import { TRANSCRIPT_END, TRANSCRIPT_START } from '../core/reply/upstream-message.js';
import { memoryTranscripts } from './memory-transcripts.js';
import { openAiBaseUrl } from './openai-common.js';

// The OpenAI-compatible forms (issue 40) against the in-process emulator, and against a loopback
// server sending what real servers send besides the answer (reasoning, tool calls, citations).

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({
    apiKey: TEST_KEY,
    form: 'all',
    bots: ['demo-bot'],
    chunkDelayMs: 0,
    maxMessageChars: 500,
  });
});
afterAll(() => emu.close());
beforeEach(() => emu.reset());

const BOT = 'demo-bot';
const errorOf = async (p: Promise<unknown>): Promise<ChatError> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof ChatError) return e;
    throw e;
  }
  throw new Error('expected a ChatError');
};
const bodyOf = (i: number) => emu.requests[i]?.body as Record<string, unknown>;

describe('base URL', () => {
  it('is the OpenAI base URL as users write it: /v1 added when missing', () => {
    expect(openAiBaseUrl('http://localhost:11434')).toBe('http://localhost:11434/v1');
    expect(openAiBaseUrl('http://localhost:11434/v1/')).toBe('http://localhost:11434/v1');
    expect(openAiBaseUrl('https://openrouter.ai/api/v1')).toBe('https://openrouter.ai/api/v1');
    expect(openAiBaseUrl('https://gw.example/openai')).toBe('https://gw.example/openai/v1');
  });
});

describe('Chat Completions', () => {
  const client = (extra: Parameters<typeof testClient>[2] = {}) =>
    testClient(emu.url, 'chat-completions', { openAi: { transcripts: memoryTranscripts(), ...extra.openAi }, ...extra })
      .service;

  it('streams a reply, and the next turn sends the conversation so far', async () => {
    const chat = client({
      openAi: { systemPrompt: 'Be brief.', requestExtra: { temperature: 0.2, model: 'ignored' } },
    });
    const id = chat.mintConversationId();
    expect(id).toMatch(/\S/);
    const first = await collect(await chat.stream({ botId: BOT, message: 'hello', conversationId: id! }));
    expect(first.text).toBe('You said: hello');
    const second = await collect(await chat.stream({ botId: BOT, message: 'again', conversationId: id! }));
    expect(second.text).toBe('You said: again');
    expect(emu.requests.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
    expect(bodyOf(1)).toEqual({
      temperature: 0.2,
      model: BOT,
      stream: true,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'You said: hello' },
        { role: 'user', content: 'again' },
      ],
    });
    await chat.close();
  });

  it('answers in one response (CHAT_STREAMING=off) and keeps that turn too', async () => {
    const chat = client();
    const id = chat.mintConversationId()!;
    expect(await chat.send({ botId: BOT, message: 'one', conversationId: id })).toMatchObject({
      text: 'You said: one',
      conversationId: id,
    });
    await chat.send({ botId: BOT, message: 'two', conversationId: id });
    expect(bodyOf(1)).toMatchObject({
      stream: false,
      messages: [{ content: 'one' }, { content: 'You said: one' }, { content: 'two' }],
    });
    expect((await chat.history(BOT, id)).messages.map((m) => m.content)).toEqual([
      'one',
      'You said: one',
      'two',
      'You said: two',
    ]);
    await chat.close();
  });

  it('context in metadata (CONTEXT_MODE=metadata) becomes earlier messages; in the message it is not repeated', async () => {
    const chat = client();
    const context = [
      { author: 'ann', role: 'user' as const, text: 'the plan is X', ts: '2026-01-01T00:00:00Z' },
      { author: 'bot', role: 'assistant' as const, text: 'noted', ts: '2026-01-01T00:00:01Z' },
    ];
    await chat.send({ botId: BOT, message: 'go on', metadata: { source: 'test', context } });
    expect(bodyOf(0).messages).toEqual([
      { role: 'user', content: 'ann: the plan is X' },
      { role: 'assistant', content: 'noted' },
      { role: 'user', content: 'go on' },
    ]);
    const inMessage = `${TRANSCRIPT_START}\nann: the plan is X\n${TRANSCRIPT_END}\n\ngo on`;
    await chat.send({ botId: BOT, message: inMessage, metadata: { source: 'test', context } });
    expect(bodyOf(1).messages).toEqual([{ role: 'user', content: inMessage }]);
    await chat.close();
  });

  it('a transcript past its bound sends only the newest turns', async () => {
    const chat = client({ openAi: { transcript: { maxTurns: 4, maxChars: 10_000 } } });
    const id = chat.mintConversationId()!;
    for (const m of ['m1', 'm2', 'm3', 'm4'])
      await collect(await chat.stream({ botId: BOT, message: m, conversationId: id }));
    const sent = (bodyOf(3).messages as { content: string }[]).map((m) => m.content);
    expect(sent).toEqual(['m2', 'You said: m2', 'm3', 'You said: m3', 'm4']);
    await chat.close();
  });

  it('a reply stopped midway is kept as far as it was read; a failed one is not kept', async () => {
    const chat = client();
    const id = chat.mintConversationId()!;
    const stream = await chat.stream({ botId: BOT, message: 'stop me [chunks 5] [stall 2]', conversationId: id });
    let seen = '';
    for await (const ev of stream) {
      if (ev.type === 'text') seen += ev.text;
      if (seen !== '') break; // the core stops reading at a Stop
    }
    stream.cancel();
    const err = await errorOf(chat.send({ botId: BOT, message: 'fails [status 400]', conversationId: id }));
    expect(err.kind).toBe('bad_request');
    const kept = (await chat.history(BOT, id)).messages.map((m) => m.content);
    expect(kept).toEqual(['stop me [chunks 5] [stall 2]', seen]);
    await chat.close();
  });

  it('maps errors as for the other forms: unknown model, key, rate limits retried', async () => {
    const chat = client();
    expect((await errorOf(chat.stream({ botId: 'nope', message: 'hi' }))).kind).toBe('unknown_bot');
    const bad = testClient(emu.url, 'chat-completions', { apiKey: 'sk-wrong-key-000000' }).service;
    expect((await errorOf(bad.stream({ botId: BOT, message: 'hi' }))).kind).toBe('unauthorized');
    emu.injectFault({ status: 429, retryAfterSeconds: 0 });
    expect((await collect(await chat.stream({ botId: BOT, message: 'after a 429' }))).text).toBe(
      'You said: after a 429',
    );
    expect((await errorOf(chat.send({ botId: BOT, message: 'x'.repeat(501) }))).kind).toBe('too_long');
    await chat.close();
    await bad.close();
  });

  it('reasoning and tool-call arguments are never text', async () => {
    const chunk = (delta: unknown) => `data: ${JSON.stringify({ choices: [{ index: 0, delta }] })}\n\n`;
    const server = await tinyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        chunk({ role: 'assistant', content: null, reasoning_content: 'thinking hard' }) +
          chunk({ reasoning: 'more thoughts' }) +
          chunk({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'get_weather', arguments: '{"city":' } }] }) +
          chunk({ content: 'It is ' }) +
          chunk({ content: 'sunny.' }) +
          'data: [DONE]\n\n',
      );
    });
    const chat = testClient(server.url, 'chat-completions').service;
    expect((await collect(await chat.stream({ botId: 'm', message: 'weather?' }))).text).toBe('It is sunny.');
    expect(server.requests[0]?.url).toBe('/v1/chat/completions');
    await chat.close();
    await server.close();
  });

  it('a context window refused: sent again with the newer half of the transcript', async () => {
    const server = await tinyServer((_req, res, body) => {
      const messages = (JSON.parse(body) as { messages: unknown[] }).messages;
      if (messages.length > 3) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'too many tokens', code: 'context_length_exceeded' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: `ok ${messages.length}` } }] }));
    });
    const transcripts = memoryTranscripts();
    await transcripts.append(
      'c1',
      ['u1', 'a1', 'u2', 'a2'].map((t) => ({ role: t.startsWith('u') ? 'user' : 'assistant', text: t, at: 1 })),
      { maxTurns: 40, maxChars: 1000 },
    );
    const chat = testClient(server.url, 'chat-completions', { openAi: { transcripts } }).service;
    expect((await chat.send({ botId: 'm', message: 'now', conversationId: 'c1' })).text).toBe('ok 3');
    expect(server.requests).toHaveLength(2);
    await chat.close();
    await server.close();
  });
});

describe('reply cap (CHAT_REPLY_MAX_CHARS)', () => {
  it.each(['chat-completions', 'responses'] as const)(
    '%s: a reply past the cap ends as too_long with what fits',
    async (form) => {
      const transcripts = memoryTranscripts();
      const chat = testClient(emu.url, form, { maxReplyChars: 50, openAi: { transcripts } }).service;
      const id = chat.mintConversationId();
      const got = await collect(
        await chat.stream({ botId: BOT, message: 'write [long 400]', ...(id ? { conversationId: id } : {}) }),
      );
      expect(got.text).toHaveLength(50);
      expect(got.events.at(-1)).toEqual({ type: 'end', reason: 'too_long' });
      const one = await chat.send({ botId: BOT, message: 'again [long 400]' });
      expect(one).toMatchObject({ endReason: 'too_long' });
      expect(one.text).toHaveLength(50);
      if (id !== undefined) expect((await transcripts.turns(id)).map((t) => t.text.length)).toEqual([16, 50]);
      await chat.close();
    },
  );
});

describe('Responses', () => {
  const client = () => testClient(emu.url, 'responses', { openAi: { systemPrompt: 'Be brief.' } }).service;

  it('the response id names the conversation and continues it as previous_response_id', async () => {
    const chat = client();
    expect(chat.mintConversationId()).toBeUndefined();
    const first = await collect(await chat.stream({ botId: BOT, message: 'hello' }));
    expect(first.text).toBe('You said: hello');
    const ids = first.events.filter((e) => e.type === 'ids');
    expect(ids).toHaveLength(1);
    const id1 = (ids[0] as { conversationId: string }).conversationId;
    expect(id1).toMatch(/^resp_/);
    const second = await collect(await chat.stream({ botId: BOT, message: 'again', conversationId: id1 }));
    expect(second.text).toBe('You said: again');
    const id2 = (second.events.find((e) => e.type === 'ids') as { conversationId: string }).conversationId;
    expect(id2).not.toBe(id1);
    expect(bodyOf(1)).toEqual({
      model: BOT,
      input: 'again',
      stream: true,
      instructions: 'Be brief.',
      previous_response_id: id1,
    });
    const history = await chat.history(BOT, id2);
    expect(history.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'hello'],
      ['assistant', 'You said: hello'],
      ['user', 'again'],
      ['assistant', 'You said: again'],
    ]);
    await chat.close();
  });

  it('one response (CHAT_STREAMING=off) names its id too', async () => {
    const chat = client();
    const first = await chat.send({ botId: BOT, message: 'one' });
    expect(first.text).toBe('You said: one');
    expect(first.conversationId).toMatch(/^resp_/);
    const second = await chat.send({ botId: BOT, message: 'two', conversationId: first.conversationId! });
    expect(second.text).toBe('You said: two');
    expect(emu.requests[1]?.conversationId).toBe(first.conversationId);
    await chat.close();
  });

  it('an expired or unknown previous response is the conversation gone; an unknown model is not', async () => {
    const chat = client();
    const first = await chat.send({ botId: BOT, message: 'one' });
    emu.expire(first.conversationId!);
    expect(
      (await errorOf(chat.stream({ botId: BOT, message: 'two', conversationId: first.conversationId! }))).kind,
    ).toBe('conversation_gone');
    expect((await errorOf(chat.send({ botId: BOT, message: 'x', conversationId: 'resp_unknown' }))).kind).toBe(
      'conversation_gone',
    );
    expect((await errorOf(chat.stream({ botId: 'nope', message: 'x', conversationId: 'resp_unknown' }))).kind).toBe(
      'unknown_bot',
    );
    await chat.close();
  });

  it('reasoning, tool arguments and repeated text are never text; tool calls are steps, citations sources', async () => {
    const ev = (type: string, fields: Record<string, unknown> = {}) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
    const server = await tinyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        ev('response.created', { response: { id: 'resp_1', status: 'in_progress' } }) +
          ev('response.reasoning_summary_text.delta', { delta: 'secret thoughts' }) +
          ev('response.output_item.added', { item: { id: 'fc_1', type: 'function_call', name: 'get_weather' } }) +
          ev('response.function_call_arguments.delta', { delta: '{"city":"Paris"}' }) +
          ev('response.output_item.done', {
            item: { id: 'fc_1', type: 'function_call', name: 'get_weather', status: 'completed' },
          }) +
          ev('response.output_text.delta', { delta: 'Sunny ' }) +
          ev('response.output_text.annotation.added', {
            annotation: { type: 'url_citation', url: 'https://weather.example/paris', title: 'Weather' },
          }) +
          ev('response.output_text.delta', { delta: 'in Paris.' }) +
          ev('response.output_text.done', { text: 'Sunny in Paris.' }) +
          ev('response.completed', { response: { id: 'resp_1', status: 'completed' } }),
      );
    });
    const chat = testClient(server.url, 'responses').service;
    const got = await collect(await chat.stream({ botId: 'm', message: 'weather?' }));
    expect(got.text).toBe('Sunny in Paris.');
    expect(got.events.filter((e) => e.type !== 'text')).toEqual([
      { type: 'ids', conversationId: 'resp_1', messageId: 'resp_1' },
      // A function call's item is done when its arguments are (agent-events.ts): the tool's work
      // is done when the reply goes on without it, at the latest when it ends.
      { type: 'step', step: { id: 'fc_1', title: 'get_weather', state: 'running' } },
      { type: 'source', source: { url: 'https://weather.example/paris', title: 'Weather' } },
      { type: 'step', step: { id: 'fc_1', title: 'get_weather', state: 'done' } },
      { type: 'end' },
    ]);
    expect(server.requests[0]?.url).toBe('/v1/responses');
    await chat.close();
    await server.close();
  });

  it('a failed response is a stream error', async () => {
    const server = await tinyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', response: { id: 'r', error: { code: 'server_error', message: 'boom' } } })}\n\n`,
      );
    });
    const chat = testClient(server.url, 'responses').service;
    const got = await collect(await chat.stream({ botId: 'm', message: 'x' }));
    expect(got.error).toBeInstanceOf(ChatError);
    expect((got.error as ChatError).kind).toBe('stream_error');
    await chat.close();
    await server.close();
  });
});
