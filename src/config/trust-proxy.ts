import { isIP } from 'node:net';

// TRUST_PROXY: which peers' X-Forwarded-For the bridge believes, so per-client bounds (Slack
// install links) see the real client behind a TLS proxy rather than the proxy's one address.
// Empty: none (the socket's address counts). A number N: the last N hops are proxies (the client
// is the N-th address from the right of "X-Forwarded-For, peer"). Otherwise a comma list of
// addresses and CIDR blocks (IPv4 or IPv6): proxies there are skipped from the right.

export type TrustProxy = { hops: number } | { ranges: { address: string; prefix: number; family: 4 | 6 }[] };

/** A parsed TRUST_PROXY, or the reason it is malformed. */
export function parseTrustProxy(
  raw: string | undefined,
): { ok: true; value?: TrustProxy } | { ok: false; message: string } {
  const text = raw?.trim() ?? '';
  if (text === '') return { ok: true };
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops > 32) return { ok: false, message: 'must be at most 32 hops' };
    return hops === 0 ? { ok: true } : { ok: true, value: { hops } };
  }
  const ranges: { address: string; prefix: number; family: 4 | 6 }[] = [];
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [address = '', bits] = part.split('/');
    const family = isIP(address);
    if (family !== 4 && family !== 6)
      return { ok: false, message: `${JSON.stringify(part)} is not an address or CIDR block` };
    const max = family === 4 ? 32 : 128;
    const prefix = bits === undefined ? max : /^\d+$/.test(bits) ? Number(bits) : Number.NaN;
    if (!(prefix >= 0 && prefix <= max))
      return { ok: false, message: `${JSON.stringify(part)} has a bad prefix length` };
    ranges.push({ address, prefix, family });
  }
  return ranges.length === 0 ? { ok: true } : { ok: true, value: { ranges } };
}

/** A bind address that is every interface of the machine (HOST's default, `0.0.0.0`, is one). */
export function isEveryInterface(host: string): boolean {
  const h = host.trim().replace(/^\[|\]$/g, '');
  return h === '' || h === '0.0.0.0' || h === '::' || h === '0:0:0:0:0:0:0:0' || h === '::0';
}

/**
 * The warning start logs when TRUST_PROXY is set while the server listens on every interface:
 * anyone reaching the port directly, past the proxy, names their own address in X-Forwarded-For.
 * A list of proxy addresses is believed only from those peers, so it warns only when a range of
 * it is everyone (a /0); a hop count believes every peer.
 */
export function trustProxyExposure(host: string, trust: TrustProxy | undefined): string | undefined {
  if (trust === undefined || !isEveryInterface(host)) return undefined;
  if ('ranges' in trust && !trust.ranges.some((r) => r.prefix === 0)) return undefined;
  return `TRUST_PROXY is set while HOST=${host} listens on every interface: a client that reaches PORT directly, not through the proxy, chooses its own address in X-Forwarded-For. Set HOST to the address only the proxy reaches (e.g. 127.0.0.1), or firewall PORT to the proxy`;
}
