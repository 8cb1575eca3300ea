import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomBytes } from 'node:crypto';
// @slack/oauth is Bolt's own dependency (see oauth.ts).
import { type InstallURLOptions, InvalidStateError, type StateStore } from '@slack/oauth';
import type { OAuthStateStore as OAuthStates, PendingLimit } from '../../store/ports.js';
import { clientKey } from '../forwarded-client.js';

// The `state` of Slack install links: random, single use, good for STATE_TTL_MS. Where the states
// are kept is a port: this process's memory (the default, enough for one process and for tests)
// or the database (the store's `oauthStates`), so that with several replicas behind one URL the
// redirect from Slack may reach another replica than the one that made the link.

/** How long an install link (its `state`) stays good. */
export const STATE_TTL_MS = 10 * 60 * 1000;
/**
 * Install links open at once in all, at most: past that room is made by taking one from the
 * network holding the most (PendingLimit.total), never from a network holding one, so addresses
 * without number cannot grow them without bound nor cancel a lone user's link.
 */
export const MAX_PENDING_STATES = 10_000;
/** Install links open at once per client address; more are refused (429) until one is used or expires. */
export const MAX_PENDING_PER_CLIENT = 5;

/** Where install links' states are kept: the store's port (its `oauthStates`), or memory. */
export type { OAuthStateStore as OAuthStates, PendingLimit } from '../../store/ports.js';

interface Pending {
  expiresAt: number;
  client: string | undefined;
  network: string;
}

/** The first key with the highest count (insertion order breaks ties: the oldest first). */
function most<K>(keys: Iterable<K>): { key: K; n: number } | undefined {
  const counts = new Map<K, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  let top: { key: K; n: number } | undefined;
  for (const [key, n] of counts) if (top === undefined || n > top.n) top = { key, n };
  return top;
}

/**
 * States in this process's memory, bounded: per client by the caller's limit, and in all by its
 * `total` (default `maxPending`), made room for as PendingLimit.total says. A state issued
 * without a limit (no client known) is refused when full instead.
 */
export class MemoryOAuthStates implements OAuthStates {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly maxPending = MAX_PENDING_STATES) {}

  get size(): number {
    return this.pending.size;
  }

  async issue(state: string, expiresAt: number, limit?: PendingLimit): Promise<boolean> {
    if (this.pending.has(state)) throw new Error('this OAuth state was issued already');
    if (limit === undefined) {
      if (this.pending.size >= this.maxPending) return false;
      this.pending.set(state, { expiresAt, client: undefined, network: '' });
      return true;
    }
    let held = 0;
    for (const p of this.pending.values()) if (p.client === limit.client && p.expiresAt >= limit.now) held++;
    if (held >= limit.max) return false;
    const network = limit.network ?? limit.client;
    const total = Math.max(1, Math.min(limit.total ?? this.maxPending, this.maxPending));
    if (!this.makeRoom(network, total)) return false;
    this.pending.set(state, { expiresAt, client: limit.client, network });
    return true;
  }

  /** Room for one more within `total`: one state taken from the network holding the most, or false. */
  private makeRoom(network: string, total: number): boolean {
    if (this.pending.size < total) return true;
    // Insertion order is expiry order (one lifetime for all): the first are the oldest.
    const top = most([...this.pending.values()].map((p) => p.network));
    if (top === undefined || top.n < 2) return false;
    let mine = 0;
    for (const p of this.pending.values()) if (p.network === network) mine++;
    if (mine >= top.n) return false;
    const inTop = [...this.pending].filter(([, p]) => p.network === top.key);
    const client = most(inTop.map(([, p]) => p.client))?.key;
    const victim = inTop.find(([, p]) => p.client === client)?.[0];
    if (victim !== undefined) this.pending.delete(victim);
    return this.pending.size < total;
  }

  async consume(state: string, now: number): Promise<boolean> {
    const p = this.pending.get(state);
    // Used up whatever happens next: a second redirect with the same state is a replay.
    this.pending.delete(state);
    return p !== undefined && now <= p.expiresAt;
  }

  /**
   * Drops expired states from the front: the flow issues every state with the same lifetime, so
   * insertion order is expiry order. One out of order waits for its turn (consume refuses it
   * meanwhile, and the bound holds).
   */
  async prune(before: number): Promise<number> {
    let removed = 0;
    for (const [state, p] of this.pending) {
      if (p.expiresAt >= before) break;
      this.pending.delete(state);
      removed++;
    }
    return removed;
  }
}

/**
 * Who asked for an install link, by address (the socket's, or one a trusted proxy names:
 * forwarded-client.ts). IPv4-mapped IPv6 is the IPv4 address; other IPv6 addresses count by
 * their /64, the block one host usually holds.
 */
export function clientAddress(remote: string | undefined): string {
  return clientKey(remote);
}

/**
 * The network a client address (clientAddress's answer) belongs to, for sharing the total bound
 * fairly: an IPv4 address by its /24, an IPv6 /64 by its /48 (a site's usual allocation: one
 * attacker's /48 holds 65,536 /64s, each of which clientAddress counts apart). Anything else
 * (`unknown`, a name) is its own network.
 */
export function clientNetwork(client: string): string {
  const v4 = /^(\d+\.\d+\.\d+)\.\d+$/.exec(client);
  if (v4?.[1] !== undefined) return `${v4[1]}.0/24`;
  const v6 = /^([0-9a-f]+:[0-9a-f]+:[0-9a-f]+):[0-9a-f]+::\/64$/.exec(client);
  if (v6?.[1] !== undefined) return `${v6[1]}::/48`;
  return client;
}

/**
 * The states are kept as SHA-256 digests: whoever reads the table (or a heap dump) cannot finish
 * a pending install with them, while the link's own value still matches.
 */
const digest = (state: string) => createHash('sha256').update(state).digest('base64url');

/** The state issueFor made for the request being served (see withIssued). */
const issued = new AsyncLocalStorage<string>();

export interface SingleUseStateStoreOptions {
  /** Where the states are kept; default: this process's memory. */
  states?: OAuthStates;
  /**
   * What every install link of the bridge asks for (its scopes). The states do not carry the
   * options, since the replica verifying one may not be the one that issued it.
   */
  installOptions: InstallURLOptions;
  /** The clock of state expiry (tests). */
  now?: () => number;
}

/**
 * @slack/oauth's StateStore on an OAuthStates port: single use, unlike its default signed state
 * that stays good for its whole lifetime however often it is replayed. No secret is involved.
 */
export class SingleUseStateStore implements StateStore {
  readonly states: OAuthStates;
  private readonly installOptions: InstallURLOptions;
  private readonly now: (() => number) | undefined;

  constructor(opts: SingleUseStateStoreOptions) {
    this.states = opts.states ?? new MemoryOAuthStates();
    this.installOptions = opts.installOptions;
    this.now = opts.now;
  }

  /**
   * A new install link's state for `client`, or undefined when that address already holds
   * MAX_PENDING_PER_CLIENT good ones (or the store is full). Run the install path inside
   * `withIssued` with it, so that @slack/oauth puts this state in the link.
   */
  async issueFor(client: string, now: Date = new Date()): Promise<string | undefined> {
    const t = this.now?.() ?? now.getTime();
    await this.states.prune(t);
    const state = randomBytes(24).toString('base64url');
    const limit = {
      client,
      network: clientNetwork(client),
      max: MAX_PENDING_PER_CLIENT,
      now: t,
      total: MAX_PENDING_STATES,
    };
    return (await this.states.issue(digest(state), t + STATE_TTL_MS, limit)) ? state : undefined;
  }

  /** Runs `fn` (the install path) so that generateStateParam hands out `state`, issued already. */
  withIssued<T>(state: string, fn: () => Promise<T>): Promise<T> {
    return issued.run(state, fn);
  }

  async generateStateParam(_installOptions: InstallURLOptions, now: Date): Promise<string> {
    const pre = issued.getStore();
    if (pre !== undefined) return pre;
    const t = this.now?.() ?? now.getTime();
    // Install links are rare: forgetting the expired ones on each is cheap and keeps them few.
    await this.states.prune(t);
    const state = randomBytes(24).toString('base64url');
    if (!(await this.states.issue(digest(state), t + STATE_TTL_MS))) throw new Error('too many pending installs');
    return state;
  }

  async verifyStateParam(now: Date, state: string): Promise<InstallURLOptions> {
    const t = this.now?.() ?? now.getTime();
    if (!(await this.states.consume(digest(state), t))) {
      throw new InvalidStateError('The state is unknown or was already used, or has expired.');
    }
    return this.installOptions;
  }
}
