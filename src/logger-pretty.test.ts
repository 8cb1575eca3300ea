import { describe, expect, it } from 'vitest';
import { defaultLogFormat, loadConfig } from './config/config.js';
import { componentLogger, createLogger } from './logger.js';
import { prettyLine } from './logger-pretty.js';

// LOG_FORMAT=pretty: what a person at a terminal reads (the default there); JSON for everything else.

function capture(format?: 'json' | 'pretty') {
  const lines: string[] = [];
  const logger = createLogger({
    level: 'info',
    ...(format ? { format } : {}),
    destination: { write: (s: string) => lines.push(s) },
  });
  return { logger, lines };
}

describe('LOG_FORMAT', () => {
  it('unset: pretty on a terminal, json otherwise; either on request; anything else is refused', () => {
    const base = { CHAT_API_URL: 'http://127.0.0.1:1', CHAT_API_KEY: 'k', CHAT_BOT_ID: 'b' };
    expect(defaultLogFormat(true)).toBe('pretty');
    expect(defaultLogFormat(false)).toBe('json');
    expect(loadConfig(base, { requirePlatform: false }).service.logFormat).toBe(defaultLogFormat());
    expect(loadConfig({ ...base, LOG_FORMAT: 'auto' }, { requirePlatform: false }).service.logFormat).toBe(
      defaultLogFormat(),
    );
    expect(loadConfig({ ...base, LOG_FORMAT: 'json' }, { requirePlatform: false }).service.logFormat).toBe('json');
    expect(loadConfig({ ...base, LOG_FORMAT: 'Pretty' }, { requirePlatform: false }).service.logFormat).toBe('pretty');
    expect(() => loadConfig({ ...base, LOG_FORMAT: 'fancy' }, { requirePlatform: false })).toThrow(
      /LOG_FORMAT: must be one of: auto, json, pretty/,
    );
  });

  it('json: one JSON object a line', () => {
    const { logger, lines } = capture();
    componentLogger(logger, 'main').info({ port: 3000 }, 'listening');
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ level: 30, component: 'main', port: 3000, msg: 'listening' });
  });

  it('pretty: time, level, component, message and fields on one line, secrets still redacted', () => {
    const { logger, lines } = capture('pretty');
    componentLogger(logger, 'slack').warn({ attempt: 2, reason: 'rate limited', token: 'xoxb-secret' }, 'retrying');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} WARN {2}slack: retrying attempt=2 reason="rate limited" token=\[redacted\]\n$/,
    );
    expect(lines.join('')).not.toContain('xoxb-secret');
  });

  it('pretty: an error shows its stack indented under the line; a non-JSON line passes unchanged', () => {
    const line = prettyLine(
      JSON.stringify({
        level: 50,
        time: '2026-11-26T20:00:00.000Z',
        msg: 'boom',
        err: { message: 'x', stack: 'Error: x\n    at f' },
      }),
    );
    expect(line).toBe('20:00:00.000 ERROR boom\n    Error: x\n        at f\n');
    expect(prettyLine('plain text')).toBe('plain text\n');
  });

  it('pretty: a url field stands on its own line, to be copied or clicked', () => {
    const line = prettyLine(
      JSON.stringify({
        level: 30,
        time: '2026-11-26T20:00:00.000Z',
        component: 'main',
        msg: 'playground: open http://127.0.0.1:3000/ in a browser',
        url: 'http://127.0.0.1:3000/',
        loopbackOnly: true,
      }),
    );
    expect(line).toBe(
      '20:00:00.000 INFO  main: playground: open http://127.0.0.1:3000/ in a browser loopbackOnly=true\n\n    http://127.0.0.1:3000/\n\n',
    );
  });
});
