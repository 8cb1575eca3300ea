import { describe, expect, it } from 'vitest';
import { parseTrustProxy } from '../../config/trust-proxy.js';
import { forwardedClient } from './forwarded-client.js';

const req = (peer: string, xff?: string) => ({
  socket: { remoteAddress: peer } as never,
  headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
});

function trust(raw: string) {
  const t = parseTrustProxy(raw);
  if (!t.ok) throw new Error(t.message);
  return forwardedClient(t.value);
}

describe('TRUST_PROXY', () => {
  it('unset: the peer counts, whatever the header says', () => {
    expect(trust('')(req('10.0.0.5', '203.0.113.9'))).toBe('10.0.0.5');
  });

  it('a proxy in the list: the address it names counts; a client cannot pick its own', () => {
    const of = trust('10.0.0.0/8, ::1');
    expect(of(req('10.0.0.5', '203.0.113.9'))).toBe('203.0.113.9');
    expect(of(req('::1', '198.51.100.1, 10.1.2.3'))).toBe('198.51.100.1');
    expect(of(req('::ffff:10.0.0.5', '2001:db8:0:1::7'))).toBe('2001:db8:0:1::/64');
    // A forged left part is skipped past only through trusted hops: the first untrusted counts.
    expect(of(req('10.0.0.5', '1.1.1.1, 203.0.113.9'))).toBe('203.0.113.9');
    // A peer outside the list: its header is ignored.
    expect(of(req('192.0.2.1', '203.0.113.9'))).toBe('192.0.2.1');
    // Nothing forwarded: the proxy itself.
    expect(of(req('10.0.0.5'))).toBe('10.0.0.5');
  });

  it('a hop count: the address that many hops from the right', () => {
    expect(trust('1')(req('10.0.0.5', '1.1.1.1, 203.0.113.9'))).toBe('203.0.113.9');
    expect(trust('2')(req('10.0.0.5', '1.1.1.1, 203.0.113.9'))).toBe('1.1.1.1');
    expect(trust('5')(req('10.0.0.5', '203.0.113.9'))).toBe('203.0.113.9');
  });

  it('refuses what is neither a hop count nor addresses', () => {
    expect(parseTrustProxy('proxy.local').ok).toBe(false);
    expect(parseTrustProxy('10.0.0.0/33').ok).toBe(false);
    expect(parseTrustProxy('99').ok).toBe(false);
  });
});
