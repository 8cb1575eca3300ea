import { describe, expect, it } from 'vitest';
import type { ChatErrorKind } from '../core/chat-port.js';
import { httpError, keyRedactor, parseErrorBody, parseRetryAfter, transportError } from './errors.js';

const ctx = (conversationSent: boolean) => ({ endpoint: 'X', conversationSent, redact: keyRedactor('secret-key-1') });
const kind = (status: number, body: unknown, conversationSent = false) =>
  httpError(status, {}, typeof body === 'string' ? body : JSON.stringify(body), ctx(conversationSent)).kind;

describe('error bodies', () => {
  it('finds the Form B code in code, error.code or a code-like error string', () => {
    expect(parseErrorBody('{"code":"RATE_LIMITED","message":"m"}')).toEqual({ code: 'RATE_LIMITED', message: 'm' });
    expect(parseErrorBody('{"error":{"code":"INVALID_BOT_ID","message":"no bot"}}')).toEqual({
      code: 'INVALID_BOT_ID',
      message: 'no bot',
    });
    expect(parseErrorBody('{"error":"SESSION_EXPIRED"}')).toEqual({ code: 'SESSION_EXPIRED' });
    expect(parseErrorBody('{"success":false,"error":"Bot not found: x"}')).toEqual({ message: 'Bot not found: x' });
    expect(parseErrorBody('<html>Bad Gateway</html>')).toEqual({ message: '<html>Bad Gateway</html>' });
    expect(parseErrorBody('')).toEqual({});
  });

  it('Retry-After in seconds or as an HTTP date', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter('0.5')).toBe(500);
    expect(parseRetryAfter(['7'])).toBe(7000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:29:00 GMT'))).toBe(0);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

type Row = [status: number, body: unknown, conversationSent: boolean, want: ChatErrorKind];

// One table for both forms: Form A says it with the status and a message, Form B with a code,
// which is tried in each place a body may carry it.
const formA = (status: number, body: unknown, sent: boolean, want: ChatErrorKind): Row => [status, body, sent, want];
const formB = (status: number, code: string, want: ChatErrorKind): Row[] =>
  [{ error: { code, message: 'm' } }, { code, message: 'm' }, { error: code }].map((body) => [
    status,
    body,
    true,
    want,
  ]);

describe('status and body → kind', () => {
  it.each<Row>([
    formA(400, { success: false, error: 'invalid request body' }, false, 'bad_request'),
    formA(400, { success: false, error: 'message is too long: 5000 characters, the limit is 4000' }, false, 'too_long'),
    formA(401, { success: false, error: 'invalid API key' }, false, 'unauthorized'),
    formA(404, { success: false, error: 'Bot not found: nope' }, false, 'unknown_bot'),
    formA(404, { success: false, error: 'Bot not found: nope' }, true, 'unknown_bot'),
    formA(404, { success: false, error: 'Conversation not found: c1' }, true, 'conversation_gone'),
    formA(404, '', true, 'conversation_gone'),
    formA(404, '', false, 'unknown_bot'),
    formA(410, '', true, 'conversation_gone'),
    formA(429, { success: false, error: 'rate limit exceeded' }, false, 'rate_limited'),
    formA(500, { success: false, error: 'server error' }, false, 'server'),
    formA(502, 'Bad Gateway', false, 'server'),
    formA(418, '', false, 'bad_request'),
    formA(302, '', false, 'bad_request'),
    ...formB(400, 'INVALID_BOT_ID', 'unknown_bot'),
    ...formB(400, 'MESSAGE_TOO_LONG', 'too_long'),
    ...formB(401, 'UNAUTHORIZED', 'unauthorized'),
    ...formB(429, 'RATE_LIMITED', 'rate_limited'),
    ...formB(500, 'BOT_ERROR', 'server'),
    ...formB(410, 'SESSION_EXPIRED', 'conversation_gone'),
    ...formB(404, 'SESSION_NOT_FOUND', 'conversation_gone'),
    ...formB(400, 'CONVERSATION_EXPIRED', 'conversation_gone'),
    ...formB(404, 'BOT_NOT_FOUND', 'unknown_bot'),
    ...formB(400, 'INVALID_REQUEST', 'bad_request'),
    // The code decides when the status says less.
    ...formB(400, 'RATE_LIMITED', 'rate_limited'),
    ...formB(400, 'BOT_ERROR', 'server'),
    ...formB(403, 'UNAUTHORIZED', 'unauthorized'),
  ])('%i %j (conversation sent: %s) → %s', (status, body, sent, want) => {
    expect(kind(status, body, sent)).toBe(want);
  });
});

describe('error details', () => {
  it('details carry status, code, endpoint and the Retry-After', () => {
    const err = httpError(
      429,
      { 'retry-after': '4' },
      '{"error":{"code":"RATE_LIMITED","message":"slow"}}',
      ctx(false),
    );
    expect(err.details).toEqual({ status: 429, code: 'RATE_LIMITED', endpoint: 'X', retryAfterMs: 4000 });
    expect(err.message).toBe('X: upstream answered 429 RATE_LIMITED slow');
  });
});

describe('transport failures', () => {
  it('refused and reset connections are network errors, timeouts are timeouts', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(transportError(refused, ctx(false))).toMatchObject({ kind: 'network', details: { code: 'ECONNREFUSED' } });
    expect(
      transportError(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }), ctx(false)).kind,
    ).toBe('network');
    expect(transportError(Object.assign(new Error('x'), { code: 'UND_ERR_HEADERS_TIMEOUT' }), ctx(false)).kind).toBe(
      'timeout',
    );
    expect(transportError(Object.assign(new Error('x'), { code: 'UND_ERR_CONNECT_TIMEOUT' }), ctx(false)).kind).toBe(
      'timeout',
    );
  });

  it('the key is redacted wherever it appears', () => {
    const err = transportError(new Error('failed with secret-key-1 and Bearer abc.def'), ctx(false));
    expect(err.message).not.toContain('secret-key-1');
    expect(err.message).not.toContain('abc.def');
  });
});
