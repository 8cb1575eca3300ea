import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { hostname, networkInterfaces } from 'node:os';
import type { TrustProxy } from '../../config/trust-proxy.js';
import { forwardedFacts } from '../forwarded-client.js';
import { createGuessLimiter, GUESS_LIMITS, type GuessLimits } from './guesses.js';

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
// - opened to other machines, every request needs PLAYGROUND_TOKEN: as the auth cookie (set by
//   `/playground?token=…`, an HMAC of this process's key: a restart asks for the token again) or
//   `Authorization: Bearer …`. A Bearer client is a script, not a browser (browsers never add one
//   by themselves): no Origin or page token needed. Tokens are compared as SHA-256 digests in
//   constant time; wrong ones are slowed per address (guesses.ts).
// Cookies ignore ports: a page on another port of this host can set a cookie of the playground's
// name, with a narrower path so the browser sends it first. So every value of a name counts, not
// the first: an API call's id is the one its page token was made for, the page's own the `__Host-`
// one (which no page can set with another path) or else the last (ours has the shortest path).
// Where the browser keeps `Secure` cookies (HTTPS, or a loopback name), the cookies are set as
// `__Host-…; Secure` and, for browsers that refuse `Secure` over plain-http loopback, as the plain
// name too.

export const UID_COOKIE = '__Host-playground_uid';
export const AUTH_COOKIE = '__Host-playground_auth';
/** The names over plain http (not loopback), where browsers refuse `__Host-`. */
export const UID_COOKIE_PLAIN = 'playground_uid';
export const AUTH_COOKIE_PLAIN = 'playground_auth';
export const TOKEN_HEADER = 'x-playground-token';
export const TOKEN_QUERY = 'page_token';
/** The browser's id lasts (its conversations are its own as long). */
const UID_MAX_AGE_S = 400 * 24 * 3600;
/** The credential cookie lasts a working day (and no longer than this process). */
export const AUTH_MAX_AGE_S = 10 * 3600;
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
  /** TRUST_PROXY: the client's address and HTTPS as a trusted proxy reports them. */
  trustProxy?: TrustProxy;
  /** Bounds of wrong token guesses (tests); default GUESS_LIMITS. */
  guessLimits?: GuessLimits;
  now?: () => number;
}

/** Why a request is refused (the `reason` of its 401/403/429 body). */
export type Refusal =
  | 'not_this_machine' // the client's address (PLAYGROUND not on)
  | 'bad_host' // Host is not one of this machine's names (DNS rebinding)
  | 'unauthenticated' // PLAYGROUND=on and no credential
  | 'wrong_token' // a Bearer token that is not PLAYGROUND_TOKEN (a guess)
  | 'too_many_guesses' // this address gave too many wrong tokens lately
  | 'bad_origin' // a write from another origin, or with none
  | 'bad_content_type' // a write that is not application/json
  | 'bad_page_token' // an API call without the page's token (another page, or a page from before a restart)
  | 'no_session'; // an API call without the browser's id cookie

export interface Caller {
  /** The browser's id (cookie), or undefined for a Bearer client without one (api() settles it). */
  uid: string | undefined;
  /** Every well-formed id cookie the browser sent (one of them its page's). */
  uids: string[];
  /** Authenticated with `Authorization: Bearer PLAYGROUND_TOKEN`. */
  bearer: boolean;
  /** The client's address (connectors/forwarded-client.ts clientKey), for per-address bounds. */
  address: string;
  /** The browser keeps `Secure` cookies here (HTTPS, or a loopback name). */
  secure: boolean;
  /** Reached over HTTPS (a trusted proxy said so). */
  https: boolean;
}

export type GuardVerdict =
  { caller: Caller } | { refused: Refusal; address: string; secure: boolean; https: boolean; retryAfterS?: number };

export interface Guard {
  /** Address, Host and (opened) the credential: every route. */
  admit(req: IncomingMessage): GuardVerdict;
  /** The API's extra rules (Origin, Content-Type on writes; page token and id cookie always). */
  api(req: IncomingMessage, caller: Caller, write: boolean): Refusal | undefined;
  /** The page token of a browser id: what the page carries. */
  pageToken(uid: string): string;
  /** A `?token=` given to the page: right (set the cookie), wrong, none given, or refused unseen. */
  tokenParam(value: string | null, address: string): 'right' | 'wrong' | 'none' | { retryAfterS: number };
  /** The cookies `?token=` sets. */
  authCookies(caller: Pick<Caller, 'secure' | 'https'>): string[];
  /** A new browser id and its Set-Cookie values. */
  newUid(caller: Pick<Caller, 'secure' | 'https'>): { uid: string; cookies: string[] };
}

export function createGuard(opts: GuardOptions): Guard {
  const processKey = randomBytes(32);
  const tokenDigest = opts.token === undefined ? undefined : digest(opts.token);
  // Per process: a restart (a new key) ends every browser's credential, as it ends page tokens.
  const authValue =
    tokenDigest === undefined
      ? undefined
      : createHmac('sha256', processKey).update('auth:').update(tokenDigest).digest('base64url');
  const guesses = createGuessLimiter(opts.guessLimits ?? GUESS_LIMITS, opts.now);
  const factsOf = forwardedFacts(opts.trustProxy);
  const { ownAddresses, hostAllowed } = machineCheck(opts);

  /** A presented token: right, wrong (counted), or refused unseen (too many wrong ones lately). */
  const presented = (given: string, address: string): 'right' | 'wrong' | { retryAfterS: number } => {
    const blocked = guesses.blocked(address);
    if (blocked !== undefined) return blocked;
    if (tokenDigest !== undefined && timingSafeEqual(digest(given), tokenDigest)) return 'right';
    guesses.failed(address);
    return 'wrong';
  };

  const pageToken = (uid: string): string => createHmac('sha256', processKey).update(`page:${uid}`).digest('base64url');

  return {
    admit(req) {
      const remote = normalizeAddress(req.socket.remoteAddress ?? '');
      const facts = factsOf(req);
      const { address, https } = facts;
      if (!opts.allowRemote && !isLoopback(remote) && !ownAddresses().has(remote))
        return { refused: 'not_this_machine', address, secure: false, https };
      const host = hostOf(req.headers.host);
      if (host === undefined || !hostAllowed(host.name)) return { refused: 'bad_host', address, secure: false, https };
      const secure = https || isLoopbackName(host.name);
      const jar = cookiesOf(req);
      let bearer = false;
      if (opts.token !== undefined) {
        const auth = req.headers.authorization;
        if (auth !== undefined && /^Bearer /i.test(auth)) {
          const r = presented(auth.slice(7).trim(), address);
          if (typeof r === 'object')
            return { refused: 'too_many_guesses', address, secure, https, retryAfterS: r.retryAfterS };
          if (r === 'wrong') return { refused: 'wrong_token', address, secure, https };
          bearer = true;
        }
        const cookie = [...(jar[AUTH_COOKIE] ?? []), ...(jar[AUTH_COOKIE_PLAIN] ?? [])];
        const authed = bearer || (authValue !== undefined && cookie.some((c) => same(c, authValue)));
        if (opts.allowRemote && !authed) return { refused: 'unauthenticated', address, secure, https };
      }
      return { caller: { ...browserIds(jar, secure), bearer, address, secure, https } };
    },

    api(req, caller, write) {
      if (write && !caller.bearer && !sameOrigin(req.headers.origin, req.headers.host)) return 'bad_origin';
      if (write && !isJson(req.headers['content-type'])) return 'bad_content_type';
      if (caller.bearer) return undefined;
      if (caller.uids.length === 0) return 'no_session';
      const url = new URL(req.url ?? '/', 'http://playground.local');
      const given = headerValue(req.headers[TOKEN_HEADER]) ?? (write ? undefined : url.searchParams.get(TOKEN_QUERY));
      if (given === undefined || given === null) return 'bad_page_token';
      // The id is the one this page was made for, whatever other cookies of the name came first.
      const mine = caller.uids.find((u) => same(given, pageToken(u)));
      if (mine === undefined) return 'bad_page_token';
      caller.uid = mine;
      return undefined;
    },

    pageToken,

    tokenParam(value, address) {
      // Without PLAYGROUND_TOKEN there is nothing to present: the parameter means nothing.
      if (value === null || opts.token === undefined) return 'none';
      return presented(value, address);
    },

    authCookies(caller) {
      return cookies(caller, AUTH_COOKIE, AUTH_COOKIE_PLAIN, authValue ?? '', AUTH_MAX_AGE_S);
    },

    newUid(caller) {
      const uid = randomBytes(16).toString('base64url');
      return { uid, cookies: cookies(caller, UID_COOKIE, UID_COOKIE_PLAIN, uid, UID_MAX_AGE_S) };
    },
  };
}

/**
 * This machine's own names and addresses (the addresses read again now and then: an interface may
 * come up later): a Host must be one of them (DNS rebinding), and without PLAYGROUND=on so must
 * the client's address.
 */
function machineCheck(opts: GuardOptions): {
  ownAddresses: () => Set<string>;
  hostAllowed: (host: string) => boolean;
} {
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
  return { ownAddresses, hostAllowed };
}

/** The browser's id cookies (well-formed ones), and which of them is the page's. */
function browserIds(jar: Record<string, string[]>, secure: boolean): Pick<Caller, 'uid' | 'uids'> {
  const hostOnly = (jar[UID_COOKIE] ?? []).filter((u) => UID_RE.test(u));
  const plain = (jar[UID_COOKIE_PLAIN] ?? []).filter((u) => UID_RE.test(u));
  const uids = secure ? [...hostOnly, ...plain] : plain;
  // The page's id: the __Host- one (no other path can hold it), else the last (ours is Path=/).
  const uid = secure && hostOnly.length > 0 ? hostOnly.at(-1) : plain.at(-1);
  return { uid, uids };
}

/** The user id the relay sees for a browser: derived, so the cookie itself is never logged or stored. */
export function userIdOf(caller: Pick<Caller, 'uid'>): string {
  if (caller.uid === undefined) return 'playground-api';
  return `playground-${createHash('sha256').update(caller.uid).digest('base64url').slice(0, 16)}`;
}

/**
 * A cookie's Set-Cookie values: `__Host-` and `Secure` where the browser keeps them, and the
 * plain name beside it over plain-http loopback (for browsers that refuse `Secure` there).
 */
function cookies(
  where: Pick<Caller, 'secure' | 'https'>,
  hostName: string,
  plainName: string,
  value: string,
  maxAgeSeconds: number,
): string[] {
  const attrs = `Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict`;
  if (!where.secure) return [`${plainName}=${value}; ${attrs}`];
  const out = [`${hostName}=${value}; ${attrs}; Secure`];
  if (!where.https) out.push(`${plainName}=${value}; ${attrs}`);
  return out;
}

/** Names a browser treats as a secure context over plain http: localhost, *.localhost, loopback addresses. */
function isLoopbackName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || isLoopback(host);
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
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

/** Every value of each cookie name, in the order the browser sent them. */
export function cookiesOf(req: IncomingMessage): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    (out[name] ??= []).push(part.slice(eq + 1).trim());
  }
  return out;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
