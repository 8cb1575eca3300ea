import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { hostname, networkInterfaces } from 'node:os';

// Who may drive the playground: only its own page, on this machine (or, opened with PLAYGROUND=on,
// a browser that presented PLAYGROUND_TOKEN once). Each rule shuts out one attack:
// - `Host` is this machine's name or address (or PLAYGROUND_PUBLIC_HOST): DNS rebinding, where a
//   hostile site's name resolves to 127.0.0.1, arrives with that site's name in Host;
// - a write carries `Origin` equal to the Host's own origin: a page from anywhere else (another
//   port of localhost too) sends its own origin, and browsers send Origin on every POST;
// - a write is `application/json`: a form or a `no-cors` fetch cannot send that type;
// - every API call carries the page token (`X-Playground-Token`, on the event stream
//   `?page_token=`), an HMAC of this process's random key and the browser's id cookie: it is
//   only in the page, which no other origin can read; a restart makes the page reload;
// - opened to other machines, every request needs PLAYGROUND_TOKEN: as the `playground_auth`
//   cookie (set by `/playground?token=…`) or `Authorization: Bearer …`. A Bearer client is a
//   script, not a browser (browsers never add one by themselves): no Origin or page token needed.

export const UID_COOKIE = 'playground_uid';
export const AUTH_COOKIE = 'playground_auth';
export const TOKEN_HEADER = 'x-playground-token';
export const TOKEN_QUERY = 'page_token';
const UID_RE = /^[A-Za-z0-9_-]{22}$/;
/** How often this machine's addresses are read again (an interface may come up later). */
const ADDRESSES_TTL_MS = 60_000;

export interface GuardOptions {
  /** PLAYGROUND=on: any client address, each with the credential. */
  allowRemote: boolean;
  /** PLAYGROUND_TOKEN. */
  token?: string;
  /** PLAYGROUND_PUBLIC_HOST, lower case. */
  publicHosts?: string[];
  /** HOST the server binds (a name given there is this machine's too). */
  bindHost?: string;
  /** This machine's addresses (tests); default os.networkInterfaces(). */
  addresses?: () => string[];
}

/** Why a request is refused (the `reason` of its 401/403 body). */
export type Refusal =
  | 'not_this_machine' // the client's address (PLAYGROUND not on)
  | 'bad_host' // Host is not one of this machine's names (DNS rebinding)
  | 'unauthenticated' // PLAYGROUND=on and no credential
  | 'bad_origin' // a write from another origin, or with none
  | 'bad_content_type' // a write that is not application/json
  | 'bad_page_token' // an API call without the page's token (another page, or a page from before a restart)
  | 'no_session'; // an API call without the browser's id cookie

export interface Caller {
  /** The browser's id (cookie), or undefined for a Bearer client without one. */
  uid: string | undefined;
  /** Authenticated with `Authorization: Bearer PLAYGROUND_TOKEN`. */
  bearer: boolean;
}

export interface Guard {
  /** Address, Host and (opened) the credential: every route. */
  admit(req: IncomingMessage): { caller: Caller } | { refused: Refusal };
  /** The API's extra rules (Origin, Content-Type on writes; page token and id cookie always). */
  api(req: IncomingMessage, caller: Caller, write: boolean): Refusal | undefined;
  /** The page token of a browser id: what the page carries. */
  pageToken(uid: string): string;
  /** A `?token=` given to the page: right (set the cookie), wrong, or none given. */
  tokenParam(value: string | null): 'right' | 'wrong' | 'none';
  /** The cookie `?token=` sets. */
  authCookie(): string;
  /** A new browser id and its Set-Cookie value. */
  newUid(): { uid: string; cookie: string };
}

export function createGuard(opts: GuardOptions): Guard {
  const processKey = randomBytes(32);
  const authValue =
    opts.token === undefined
      ? undefined
      : createHmac('sha256', opts.token).update('assistant-bridge playground auth v1').digest('base64url');
  const readAddresses = opts.addresses ?? machineAddresses;
  let addresses = new Set<string>();
  let addressesAt = -Infinity;
  const ownAddresses = (): Set<string> => {
    const now = Date.now();
    if (now - addressesAt > ADDRESSES_TTL_MS) {
      addresses = new Set(readAddresses().map((a) => normalizeAddress(a)));
      addressesAt = now;
    }
    return addresses;
  };

  const bindHost = opts.bindHost?.toLowerCase().replace(/^\[|\]$/g, '');
  const names = new Set<string>([
    'localhost',
    hostname().toLowerCase(),
    ...(opts.publicHosts ?? []),
    ...(bindHost !== undefined && bindHost !== '0.0.0.0' && bindHost !== '::' && bindHost !== '' ? [bindHost] : []),
  ]);

  const hostAllowed = (host: string): boolean => {
    if (names.has(host) || host.endsWith('.localhost')) return true;
    const a = normalizeAddress(host);
    return isLoopback(a) || ownAddresses().has(a);
  };

  const credentialOf = (req: IncomingMessage): 'bearer' | 'cookie' | undefined => {
    if (opts.token === undefined || authValue === undefined) return undefined;
    const auth = req.headers.authorization;
    if (auth !== undefined && /^Bearer /i.test(auth) && same(auth.slice(7).trim(), opts.token)) return 'bearer';
    const cookie = cookiesOf(req)[AUTH_COOKIE];
    if (cookie !== undefined && same(cookie, authValue)) return 'cookie';
    return undefined;
  };

  const pageToken = (uid: string): string => createHmac('sha256', processKey).update(`page:${uid}`).digest('base64url');

  return {
    admit(req) {
      const remote = normalizeAddress(req.socket.remoteAddress ?? '');
      if (!opts.allowRemote && !isLoopback(remote) && !ownAddresses().has(remote))
        return { refused: 'not_this_machine' };
      const host = hostOf(req.headers.host);
      if (host === undefined || !hostAllowed(host.name)) return { refused: 'bad_host' };
      const credential = credentialOf(req);
      if (opts.allowRemote && credential === undefined) return { refused: 'unauthenticated' };
      const uid = cookiesOf(req)[UID_COOKIE];
      return {
        caller: { uid: uid !== undefined && UID_RE.test(uid) ? uid : undefined, bearer: credential === 'bearer' },
      };
    },

    api(req, caller, write) {
      if (write && !caller.bearer && !sameOrigin(req.headers.origin, req.headers.host)) return 'bad_origin';
      if (write && !isJson(req.headers['content-type'])) return 'bad_content_type';
      if (caller.bearer) return undefined;
      if (caller.uid === undefined) return 'no_session';
      const url = new URL(req.url ?? '/', 'http://playground.local');
      const given = headerValue(req.headers[TOKEN_HEADER]) ?? (write ? undefined : url.searchParams.get(TOKEN_QUERY));
      if (given === undefined || given === null || !same(given, pageToken(caller.uid))) return 'bad_page_token';
      return undefined;
    },

    pageToken,

    tokenParam(value) {
      // Without PLAYGROUND_TOKEN there is nothing to present: the parameter means nothing.
      if (value === null || opts.token === undefined) return 'none';
      return same(value, opts.token) ? 'right' : 'wrong';
    },

    authCookie() {
      return cookie(AUTH_COOKIE, authValue ?? '', 400 * 24 * 3600);
    },

    newUid() {
      const uid = randomBytes(16).toString('base64url');
      return { uid, cookie: cookie(UID_COOKIE, uid, 400 * 24 * 3600) };
    },
  };
}

/** The user id the relay sees for a browser: derived, so the cookie itself is never logged or stored. */
export function userIdOf(caller: Caller): string {
  if (caller.uid === undefined) return 'playground-api';
  return `playground-${createHash('sha256').update(caller.uid).digest('base64url').slice(0, 16)}`;
}

function cookie(name: string, value: string, maxAgeSeconds: number): string {
  return `${name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict`;
}

/** Loopback: 127.0.0.0/8 and ::1 (an IPv4-mapped address counts as its IPv4 form). */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const a = normalizeAddress(address);
  return a === '::1' || /^127\.\d+\.\d+\.\d+$/.test(a);
}

function normalizeAddress(address: string): string {
  let a = address.toLowerCase().replace(/^\[|\]$/g, '');
  const zone = a.indexOf('%');
  if (zone >= 0) a = a.slice(0, zone);
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a;
}

function machineAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) out.push(i.address);
  return out;
}

/** The Host header parsed: its name (lower case, no brackets, no trailing dot) and port. */
export function hostOf(header: string | undefined): { name: string; port: string } | undefined {
  if (header === undefined || header === '' || /[\s/@?#\\]/.test(header)) return undefined;
  try {
    const u = new URL(`http://${header}`);
    return { name: u.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, ''), port: u.port };
  } catch {
    return undefined;
  }
}

/**
 * The write's Origin is the origin of the Host it was sent to (http or https: behind a TLS proxy
 * the bridge sees http). A missing Origin is refused: every browser sends one on a POST, so only a
 * non-browser client lacks it, and such a client uses Bearer.
 */
export function sameOrigin(origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined || origin === 'null') return false;
  const h = hostOf(host);
  if (h === undefined) return false;
  let o: URL;
  try {
    o = new URL(origin);
  } catch {
    return false;
  }
  if (o.protocol !== 'http:' && o.protocol !== 'https:') return false;
  // An Origin is scheme, host and port: anything more is not one a browser sent.
  if (o.username !== '' || o.password !== '' || o.pathname !== '/' || o.search !== '' || o.hash !== '') return false;
  const defaultPort = o.protocol === 'https:' ? '443' : '80';
  const oName = o.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  return oName === h.name && (o.port || defaultPort) === (h.port || defaultPort);
}

function isJson(type: string | undefined): boolean {
  return type !== undefined && /^application\/json\s*(;|$)/i.test(type.trim());
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

export function cookiesOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    // The first of a name wins (the most specific path, as browsers order them).
    if (out[name] === undefined) out[name] = part.slice(eq + 1).trim();
  }
  return out;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
