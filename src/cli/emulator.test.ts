import { request } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import { parseArgs, run } from './emulator.js';

function sink() {
  const lines: string[] = [];
  return { lines, write: (s: string) => lines.push(...s.split('\n').filter((l) => l !== '')) };
}

describe('emulator CLI', () => {
  it('has the documented defaults', () => {
    const p = parseArgs([]);
    expect(p).toMatchObject({
      ok: true,
      opts: {
        port: 8787,
        host: '127.0.0.1',
        form: 'both',
        apiKey: 'dev-key',
        bots: ['demo-bot'],
        streamFormat: 'sse-json',
        chunkDelayMs: 20,
        maxMessageChars: 4000,
        sessionIdleSeconds: 86400,
      },
    });
  });

  it('takes every flag, as --flag value or --flag=value', () => {
    const p = parseArgs([
      '--port=0',
      '--host',
      '127.0.0.1',
      '--form',
      'b',
      '--api-key',
      'k',
      '--bots',
      'a, b,c',
      '--stream-format',
      'ndjson',
      '--chunk-delay-ms',
      '0',
      '--max-message-chars=10',
      '--session-idle-seconds',
      '60',
      '--stream-ids',
      'header',
    ]);
    expect(p).toMatchObject({
      ok: true,
      opts: {
        port: 0,
        form: 'b',
        apiKey: 'k',
        bots: ['a', 'b', 'c'],
        streamFormat: 'ndjson',
        chunkDelayMs: 0,
        maxMessageChars: 10,
        sessionIdleSeconds: 60,
        streamIds: 'header',
      },
    });
  });

  it.each([
    [['--port', 'abc'], /--port must be an integer/],
    [['--port', '70000'], /--port must be between 0 and 65535/],
    [['--form', 'c'], /--form must be one of a, b, both/],
    [['--stream-format', 'xml'], /--stream-format must be one of sse-json, sse-text, ndjson, json-preamble, plain/],
    [['--chunk-delay-ms', '-1'], /--chunk-delay-ms/],
    [['--max-message-chars', '0'], /--max-message-chars must be between 1/],
    [['--session-idle-seconds', 'x'], /--session-idle-seconds must be an integer/],
    [['--bots', ','], /--bots needs at least one bot id/],
    [['--api-key', ''], /--api-key must not be empty/],
    [['--port'], /--port needs a value/],
    [['--nope', '1'], /unknown flag --nope/],
    [['stray'], /unexpected argument "stray"/],
  ])('refuses %j with one line on stderr and status 2', async (args, message) => {
    const out = sink();
    const err = sink();
    expect(await run(args, { stdout: out, stderr: err })).toBe(2);
    expect(err.lines).toHaveLength(1);
    expect(err.lines[0]).toMatch(message);
    expect(out.lines).toEqual([]);
  });

  it('prints where it listens and the bots, serves, and stops on abort with status 0', async () => {
    const out = sink();
    const ac = new AbortController();
    const done = run(['--port', '0', '--bots', 'one,two', '--api-key', 'k', '--chunk-delay-ms', '0'], {
      stdout: out,
      signal: ac.signal,
    });
    await vi.waitFor(() => expect(out.lines.length).toBe(2));
    const m = /^listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(out.lines[0] ?? '');
    expect(m).not.toBeNull();
    expect(out.lines[1]).toBe('bots: one, two');
    const res = await request(`${m?.[1]}/api/v1/chat/two/message`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'hi' }),
    });
    expect(res.statusCode).toBe(200);
    expect(((await res.body.json()) as { data: { response: string } }).data.response).toBe('You said: hi');
    ac.abort();
    expect(await done).toBe(0);
    await expect(request(`${m?.[1]}/v1/chat/conversations`)).rejects.toThrow();
  });

  it('stops on SIGTERM', async () => {
    const out = sink();
    const done = run(['--port', '0'], { stdout: out });
    await vi.waitFor(() => expect(out.lines.length).toBe(2));
    process.emit('SIGTERM');
    expect(await done).toBe(0);
  });

  it('reports a port in use with status 1', async () => {
    const out = sink();
    const ac = new AbortController();
    const first = run(['--port', '0'], { stdout: out, signal: ac.signal });
    await vi.waitFor(() => expect(out.lines.length).toBe(2));
    const port = /:(\d+)$/.exec(out.lines[0] ?? '')?.[1] ?? '0';
    const err = sink();
    expect(await run(['--port', port], { stdout: sink(), stderr: err })).toBe(1);
    expect(err.lines[0]).toMatch(/already in use/);
    ac.abort();
    await first;
  });
});
