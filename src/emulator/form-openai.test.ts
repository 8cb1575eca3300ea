import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from './index.js';

// The emulator's OpenAI-compatible forms over plain HTTP: what a server speaking them answers.

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ form: 'all', apiKey: 'k1', bots: ['demo-bot'], chunkDelayMs: 0 });
});
afterAll(() => emu.close());
beforeEach(() => emu.reset());

const call = (path: string, body?: unknown, key = 'k1') =>
  fetch(`${emu.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
const sseData = (text: string) =>
  text
    .split('\n\n')
    .map((frame) =>
      frame
        .split('\n')
        .find((l) => l.startsWith('data: '))
        ?.slice(6),
    )
    .filter((d): d is string => d !== undefined);

describe('OpenAI-compatible forms of the emulator', () => {
  it('lists the bots as models; a bad key is 401 invalid_api_key; an unknown model 404 model_not_found', async () => {
    const models = await call('/v1/models');
    expect(await models.json()).toMatchObject({ object: 'list', data: [{ id: 'demo-bot', object: 'model' }] });
    const bad = await call('/v1/chat/completions', { model: 'demo-bot', messages: [] }, 'nope');
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_api_key' } });
    const unknown = await call('/v1/responses', { model: 'gpt-x', input: 'hi' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: 'model_not_found', param: 'model' } });
  });

  it('Chat Completions: one response, and a stream of chunks ending with [DONE]', async () => {
    const one = await call('/v1/chat/completions', { model: 'demo-bot', messages: [{ role: 'user', content: 'hi' }] });
    expect(await one.json()).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { role: 'assistant', content: 'You said: hi' }, finish_reason: 'stop' }],
    });
    const res = await call('/v1/chat/completions', {
      model: 'demo-bot',
      stream: true,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'hello [chunks 3]' }] },
      ],
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const data = sseData(await res.text());
    expect(data.at(-1)).toBe('[DONE]');
    const text = data
      .slice(0, -1)
      .map((d) => (JSON.parse(d) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '')
      .join('');
    expect(text).toBe('You said: hello [chunks 3]');
    expect(emu.requests.map((r) => [r.form, r.endpoint, r.message])).toEqual([
      ['chat-completions', 'send', 'hi'],
      ['chat-completions', 'stream', 'hello [chunks 3]'],
    ]);
  });

  it('Responses: ids continue the conversation; an expired or unknown previous id is 404; input items read back', async () => {
    const first = (await (await call('/v1/responses', { model: 'demo-bot', input: 'one' })).json()) as { id: string };
    expect(first.id).toMatch(/^resp_/);
    const res = await call('/v1/responses', {
      model: 'demo-bot',
      input: 'two',
      previous_response_id: first.id,
      stream: true,
    });
    const events = sseData(await res.text()).map(
      (d) => JSON.parse(d) as { type: string; response?: { id: string }; delta?: string },
    );
    expect(events[0]?.type).toBe('response.created');
    expect(events.at(-1)?.type).toBe('response.completed');
    const second = events[0]?.response?.id as string;
    const text = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    expect(text).toBe('You said: two');
    const items = (await (await call(`/v1/responses/${second}/input_items?order=asc`)).json()) as {
      data: { role: string; content: { text: string }[] }[];
    };
    expect(items.data.map((i) => `${i.role}: ${i.content[0]?.text}`)).toEqual([
      'user: one',
      'assistant: You said: one',
      'user: two',
    ]);
    expect(emu.expire(second)).toBe(true);
    const gone = await call('/v1/responses', { model: 'demo-bot', input: 'three', previous_response_id: second });
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({
      error: { code: 'previous_response_not_found', param: 'previous_response_id' },
    });
    const unknown = await call('/v1/responses', { model: 'demo-bot', input: 'x', previous_response_id: 'resp_nope' });
    expect(unknown.status).toBe(404);
  });

  it('faults and directives answer in OpenAI error bodies; the seed forms are still served', async () => {
    emu.injectFault({ status: 429, form: 'responses' });
    const limited = await call('/v1/responses', { model: 'demo-bot', input: 'x' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(await limited.json()).toMatchObject({ error: { code: 'rate_limit_exceeded', type: 'rate_limit_error' } });
    const failing = await call('/v1/chat/completions', {
      model: 'demo-bot',
      messages: [{ role: 'user', content: 'x [status 503]' }],
    });
    expect(failing.status).toBe(503);
    const a = await call('/api/v1/chat/demo-bot/message', { message: 'form a' });
    expect(await a.json()).toMatchObject({ success: true, data: { response: 'You said: form a' } });
  });
});

describe('an emulator of one form', () => {
  it('serves only its routes: Form B does not answer /v1/chat/completions', async () => {
    const b = await startEmulator({ form: 'b', apiKey: 'k1' });
    try {
      const res = await fetch(`${b.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer k1', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo-bot', messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(res.status).toBe(404);
    } finally {
      await b.close();
    }
  });
});

describe('an emulator serving the seed forms only (the default `both`)', () => {
  it("answers OpenAI's paths 404 naming the flag that serves them; Form B's paths still answer", async () => {
    const seed = await startEmulator({ apiKey: 'k1', bots: ['demo-bot'], chunkDelayMs: 0 });
    try {
      const res = await fetch(`${seed.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer k1', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo-bot', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(404);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('form_not_served');
      expect(body.error.message).toContain('--form all');
      const b = await fetch(`${seed.url}/v1/chat/send`, {
        method: 'POST',
        headers: { authorization: 'Bearer k1', 'content-type': 'application/json' },
        body: JSON.stringify({ bot_id: 'demo-bot', message: 'hi' }),
      });
      expect(b.status).toBe(200);
    } finally {
      await seed.close();
    }
  });
});
