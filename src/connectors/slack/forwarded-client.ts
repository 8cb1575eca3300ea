import { BlockList } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { TrustProxy } from '../../config/trust-proxy.js';
import { clientAddress } from './oauth-state.js';

// Who asked, behind TRUST_PROXY: the peer's address, or, when the peer is a trusted proxy, the
// address it names in X-Forwarded-For (walking right to left past trusted proxies). An address
// no trusted proxy vouches for is never taken from the header: a client cannot pick its own.

const unmapped = (a: string) => /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a)?.[1] ?? a;

export type ClientOf = (req: Pick<IncomingMessage, 'headers' | 'socket'>) => string;

export function forwardedClient(trust: TrustProxy | undefined): ClientOf {
  if (trust === undefined) return (req) => clientAddress(req.socket.remoteAddress);
  let trusted: (address: string) => boolean = () => false;
  if ('ranges' in trust) {
    const list = new BlockList();
    for (const r of trust.ranges) list.addSubnet(r.address, r.prefix, r.family === 4 ? 'ipv4' : 'ipv6');
    trusted = (a) => {
      try {
        return list.check(a, a.includes(':') ? 'ipv6' : 'ipv4');
      } catch {
        return false; // not an address (a malformed header entry)
      }
    };
  }
  return (req) => {
    const peer = unmapped(req.socket.remoteAddress ?? '');
    const header = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
      .split(',')
      .map((h) => unmapped(h.trim()))
      .filter(Boolean);
    const chain = [...hops, peer];
    if ('hops' in trust) {
      // The last `hops` addresses are proxies: the client is the one before them.
      return clientAddress(chain[Math.max(0, chain.length - 1 - trust.hops)]);
    }
    let i = chain.length - 1;
    while (i > 0 && trusted(chain[i] ?? '')) i--;
    return clientAddress(chain[i]);
  };
}
