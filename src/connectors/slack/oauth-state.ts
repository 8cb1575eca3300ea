import { createHash, randomBytes } from 'node:crypto';
// @slack/oauth is Bolt's own dependency (see oauth.ts).
import { type InstallURLOptions, InvalidStateError, type StateStore } from '@slack/oauth';

// The `state` of Slack install links: random, single use, good for STATE_TTL_MS. Where the states
// are kept is a port: this process's memory (the default, enough for one process and for tests)
// or the database (the store's `oauthStates`), so that with several replicas behind one URL the
// redirect from Slack may reach another replica than the one that made the link.

/** How long an install link (its `state`) stays good. */
export const STATE_TTL_MS = 10 * 60 * 1000;
/** Install links open at once in memory, at most; the oldest are forgotten first. */
export const MAX_PENDING_STATES = 10_000;

/** Where install links' states are kept. The store's AsyncOAuthStateStore has this shape. */
export interface OAuthStates {
  issue(state: string, expiresAt: number): Promise<void>;
  /** true once for a state issued and good through `expiresAt`; false if unknown, expired or used. Atomic. */
  consume(state: string, now: number): Promise<boolean>;
  /** Forget states that expired before `before`. */
  prune(before: number): Promise<number>;
}

/** States in this process's memory, bounded: past `maxPending` the oldest are dropped. */
export class MemoryOAuthStates implements OAuthStates {
  private readonly pending = new Map<string, number>();

  constructor(private readonly maxPending = MAX_PENDING_STATES) {}

  get size(): number {
    return this.pending.size;
  }

  async issue(state: string, expiresAt: number): Promise<void> {
    if (this.pending.has(state)) throw new Error('this OAuth state was issued already');
    while (this.pending.size >= this.maxPending) {
      const oldest = this.pending.keys().next().value;
      if (oldest === undefined) break;
      this.pending.delete(oldest);
    }
    this.pending.set(state, expiresAt);
  }

  async consume(state: string, now: number): Promise<boolean> {
    const expiresAt = this.pending.get(state);
    // Used up whatever happens next: a second redirect with the same state is a replay.
    this.pending.delete(state);
    return expiresAt !== undefined && now <= expiresAt;
  }

  /**
   * Drops expired states from the front: the flow issues every state with the same lifetime, so
   * insertion order is expiry order. One out of order waits for its turn (consume refuses it
   * meanwhile, and the bound holds).
   */
  async prune(before: number): Promise<number> {
    let removed = 0;
    for (const [state, expiresAt] of this.pending) {
      if (expiresAt >= before) break;
      this.pending.delete(state);
      removed++;
    }
    return removed;
  }
}

/**
 * The states are kept as SHA-256 digests: whoever reads the table (or a heap dump) cannot finish
 * a pending install with them, while the link's own value still matches.
 */
const digest = (state: string) => createHash('sha256').update(state).digest('base64url');

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

  async generateStateParam(_installOptions: InstallURLOptions, now: Date): Promise<string> {
    const t = this.now?.() ?? now.getTime();
    // Install links are rare: forgetting the expired ones on each is cheap and keeps them few.
    await this.states.prune(t);
    const state = randomBytes(24).toString('base64url');
    await this.states.issue(digest(state), t + STATE_TTL_MS);
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
