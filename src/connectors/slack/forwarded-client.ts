import type { TrustProxy } from '../../config/trust-proxy.js';
import { type ForwardedOf, forwardedFacts } from '../forwarded-client.js';

// Who asked for an install link, behind TRUST_PROXY: the client's key as connectors/forwarded-client.ts
// finds it (the peer, or the address a trusted proxy names; an IPv6 client by its /64).

export type ClientOf = (req: Parameters<ForwardedOf>[0]) => string;

export function forwardedClient(trust: TrustProxy | undefined): ClientOf {
  const facts = forwardedFacts(trust);
  return (req) => facts(req).address;
}
