import { BlockList } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { TrustProxy } from '../config/trust-proxy.js';

// Who is asking, behind TRUST_PROXY, for every connector that bounds or keys by client (Slack's
// install links, the playground's per-address caps and cookies): the peer's address, or, when the
// peer is a proxy TRUST_PROXY names, the address it forwards (X-Forwarded-For, walked right to
// left past trusted proxies), and whether the browser used HTTPS (X-Forwarded-Proto). A header no
// trusted proxy vouches for is never believed: a client cannot pick its own address or claim HTTPS.

export interface ForwardedFacts {
  /** The client's key (clientKey): an IPv4 address, or an IPv6 address's /64. */
  address: string;
  /** The browser reached the bridge over HTTPS (a trusted proxy said so). */
  https: boolean;
}

export type ForwardedOf = (req: Pick<IncomingMessage, 'headers' | 'socket'>) => ForwardedFacts;

const unmapped = (a: string): string => /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a)?.[1] ?? a;

export function forwardedFacts(trust: TrustProxy | undefined): ForwardedOf {
  if (trust === undefined) return (req) => ({ address: clientKey(req.socket.remoteAddress), https: false });
  const trusted = trustedPeers(trust);
  return (req) => {
    const peer = unmapped(req.socket.remoteAddress ?? '');
    const chain = [...listOf(req.headers['x-forwarded-for']).map(unmapped), peer];
    let i: number;
    // With a hop count the last `hops` addresses are proxies: the client is the one before them.
    if ('hops' in trust) i = Math.max(0, chain.length - 1 - trust.hops);
    else for (i = chain.length - 1; i > 0 && trusted(chain[i] ?? '');) i--;
    // The proto is the nearest proxy's word: believed only when the peer itself is a trusted proxy.
    const peerTrusted = 'hops' in trust ? trust.hops > 0 : trusted(peer);
    const proto = listOf(req.headers['x-forwarded-proto']).at(-1)?.toLowerCase();
    return { address: clientKey(chain[i]), https: peerTrusted && proto === 'https' };
  };
}

/** Whether an address is one of TRUST_PROXY's ranges (never, for a hop count). */
function trustedPeers(trust: TrustProxy): (address: string) => boolean {
  if (!('ranges' in trust)) return () => false;
  const list = new BlockList();
  for (const r of trust.ranges) list.addSubnet(r.address, r.prefix, r.family === 4 ? 'ipv4' : 'ipv6');
  return (a) => {
    try {
      return list.check(a, a.includes(':') ? 'ipv6' : 'ipv4');
    } catch {
      return false; // not an address (a malformed header entry)
    }
  };
}

function listOf(header: string | string[] | undefined): string[] {
  return (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
}

/**
 * A client's key for per-client bounds: an IPv4 address as is (an IPv4-mapped one as IPv4); an
 * IPv6 address as its /64, the block one host usually holds.
 */
export function clientKey(remote: string | undefined): string {
  if (remote === undefined || remote === '') return 'unknown';
  const a = unmapped(
    remote
      .toLowerCase()
      .replace(/^\[|\]$/g, '')
      .split('%')[0] ?? '',
  );
  if (!a.includes(':')) return a;
  const [head = '', tail = ''] = a.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = a.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
