import type {
  BudgetStore,
  ConversationStore,
  EventStore,
  FeedbackStore,
  InFlightBegin,
  InFlightRecord,
  InFlightStore,
  Platform,
  PlaygroundOwnerStore,
  PlaygroundTurnStore,
  TranscriptStore,
} from '../core/ports.js';
import type { StoreHealth } from './health.js';

// One asynchronous port over everything the store holds, so SQLite (one process) and PostgreSQL
// (several replicas sharing a database) can stand behind the same interface: the core's ports
// (src/core/store-ports.ts), and what only replicas need (owners, claims, leases, signals). Every operation
// that two replicas may race on is atomic in the database itself (insert-if-absent,
// compare-and-set, conditional upsert), never a read followed by a write in the caller.
//
// A storage failure (database down, read-only, full, a statement timeout) rejects with a
// StoreUnavailableError (code 'STORE_UNAVAILABLE') and shows in health(); errors about the data
// reject as they are.

/** An in-flight reply and the replica streaming it. */
export interface OwnedInFlightRecord extends InFlightRecord {
  owner: string;
}

/** The core's in-flight replies, with the replica that streams each. */
export interface ReplicaInFlightStore extends InFlightStore {
  /** `owner`: the replica streaming the reply (REPLICA_ID). */
  begin(rec: InFlightBegin & { owner: string }): Promise<number>;
  /** Replies still `streaming`, optionally for one platform, oldest first. */
  listOpen(platform?: Platform): Promise<OwnedInFlightRecord[]>;
  /** Replies still `streaming` whose owner is one of `owners` (replicas found gone), oldest first. */
  listOpenOwnedBy(owners: readonly string[]): Promise<OwnedInFlightRecord[]>;
  /**
   * Moves a streaming reply from `from` to `to` if `from` still owns it: of two replicas taking
   * over one gone replica's reply, exactly one gets true and repairs it.
   */
  claim(id: number, from: string, to: string, at: number): Promise<boolean>;
}

/** Which Slack installation: a workspace, or an Enterprise Grid org. */
export interface InstallationKey {
  teamId: string | undefined;
  enterpriseId: string | undefined;
}

/** Slack OAuth installations, as src/store/sqlite/installation-repo.ts keeps them. */
export interface InstallationStore {
  save(key: InstallationKey, userId: string | undefined, installationJson: string, at: number): Promise<void>;
  /** The installation of a team, or of its enterprise's org-wide install. */
  find(key: InstallationKey): Promise<string | undefined>;
  delete(key: InstallationKey): Promise<number>;
  count(): Promise<number>;
}

/** At most `max` pending install links per client address (`client`), counted at `now`. */
export interface PendingLimit {
  client: string;
  max: number;
  now: number;
  /**
   * At most this many pending states in all (every client). When full, room is made by taking
   * one state from the network (`network`) holding the most, within it from the client holding
   * the most, oldest first; never from a network holding a single state. When the newcomer's own
   * network holds as many as any other, or every network holds one, the newcomer is refused.
   */
  total?: number;
  /** The client's network (oauth-state.ts clientNetwork: IPv4 /24, IPv6 /48); default `client`. */
  network?: string;
}

/**
 * Slack OAuth `state` values of install links, so the redirect may reach any replica. The store
 * keeps the values as it is given them (the connector hands it digests, not the links' values).
 */
export interface OAuthStateStore {
  /**
   * Keeps a new state. With `limit`, only while `limit.client` holds fewer than `limit.max`
   * states still good at `limit.now`: otherwise nothing is stored and the answer is false. With
   * `limit.total`, a full store makes room as PendingLimit.total says, or refuses. Atomic across
   * replicas: concurrent issues for one client never exceed `limit.max`.
   */
  issue(state: string, expiresAt: number, limit?: PendingLimit): Promise<boolean>;
  /**
   * Uses the state up: true once for a state issued and not expired at `now` (good through
   * `expiresAt`); false when unknown, expired or used already, by any replica. Atomic.
   */
  consume(state: string, now: number): Promise<boolean>;
  /** Forget states that expired before `before`. Returns how many were removed. */
  prune(before: number): Promise<number>;
}

/** Replicas announce themselves; one whose heartbeat is older than the lease is gone. */
export interface ReplicaRegistry {
  /** Insert or refresh this replica's heartbeat. */
  heartbeat(replicaId: string, at: number): Promise<void>;
  /** Replicas whose heartbeat is at most `leaseMs` old at `now`, sorted. */
  live(now: number, leaseMs: number): Promise<string[]>;
  /** Replicas whose heartbeat is older than `leaseMs` at `now`, sorted. */
  gone(now: number, leaseMs: number): Promise<string[]>;
  /** A replica that stopped cleanly leaves at once (the others need not wait for its lease). */
  leave(replicaId: string): Promise<void>;
}

/**
 * Who answers in a place, so one place's replies keep their order across replicas. A lease is
 * held until released, or until both its last renewal and its holder's heartbeat are older than
 * the lease; then any replica may take it over.
 */
export interface PlaceLeases {
  /**
   * true when `replicaId` holds the lease afterwards (newly, again, or taken over). With a
   * `ticket` (a message that joined the place's queue) also only when no older message of a live
   * replica waits there; the ticket leaves the queue when the lease is taken.
   */
  tryAcquire(
    placeKey: string,
    replicaId: string,
    now: number,
    leaseMs: number,
    ticket?: StoredTicket,
  ): Promise<boolean>;
  /** A message admitted by `replicaId` joins the place's queue (see tryAcquire). */
  join(placeKey: string, ticket: StoredTicket, replicaId: string): Promise<void>;
  /** A message leaves the place's queue without being answered. */
  leave(placeKey: string, ticketId: string): Promise<void>;
  /** Refreshes a lease `replicaId` holds; false when it holds it no more. */
  renew(placeKey: string, replicaId: string, now: number): Promise<boolean>;
  /**
   * Gives a lease up (a lease held by another replica is left alone), leaving `handover` (what
   * this replica wrote in the place) for the next holder.
   */
  release(placeKey: string, replicaId: string, handover?: string): Promise<void>;
  /** The holder says which reply it writes in the place and who asked for it (for a remote Stop). */
  describe(placeKey: string, replicaId: string, replyKey: string, askerId: string): Promise<void>;
  /** The lease whose holder writes this reply, or holds this place; undefined when none does. */
  findReply(by: { replyKey: string } | { placeKey: string }): Promise<LiveLease | undefined>;
  /** What the last replica to answer in the place left (see release), and who it was. */
  handover(placeKey: string): Promise<{ replicaId: string; handover: string } | undefined>;
  /** The replica holding the lease, if any (expired or not). */
  holder(placeKey: string): Promise<string | undefined>;
}

/** A place's lease as another replica sees it (PlaceLeases.findReply). */
export interface LiveLease {
  placeKey: string;
  holder: string;
  replyKey: string | undefined;
  askerId: string | undefined;
}

/**
 * Messages between replicas as they happen (PostgreSQL LISTEN/NOTIFY): what one publishes on a
 * channel reaches every replica subscribed to it, the publisher included. Best effort: a replica
 * whose listening connection is down misses what is published meanwhile.
 */
export interface StoreSignals {
  publish(channel: string, payload: string): Promise<void>;
  subscribe(channel: string, onMessage: (payload: string) => void): void;
}

/** A message in a place's queue: its id (the event id) and when it arrived (epoch ms). */
export interface StoredTicket {
  id: string;
  at: number;
}

export type StoreBackend = 'sqlite' | 'postgres';

/** A place's handover is read by the next holder within seconds; an hour is plenty. */
export const HANDOVER_KEEP_MS = 3600_000;
/** A lesson not renewed for a week is dropped: limits change, and relearning costs a 429 or two. */
export const BUDGET_KEEP_MS = 7 * 24 * 3600_000;

export interface AsyncStore {
  readonly backend: StoreBackend;
  /** Where the data is, without secrets: a file path, or postgres://user@host:port/db. */
  readonly location: string;
  /** The core's conversation mapping, compare-and-set included (replicas race on renewals). */
  conversations: Required<ConversationStore>;
  events: EventStore;
  /** Stateless upstreams' transcripts (Chat Completions); pruned and reset with `conversations`. */
  transcripts: TranscriptStore;
  inflight: ReplicaInFlightStore;
  installations: InstallationStore;
  replicas: ReplicaRegistry;
  leases: PlaceLeases;
  budgets: BudgetStore;
  /** Only where several replicas can share the store (PostgreSQL). */
  signals?: StoreSignals;
  feedback: FeedbackStore;
  oauthStates: OAuthStateStore;
  /** Who owns each playground conversation (the browser that first wrote in it). */
  playgroundOwners: PlaygroundOwnerStore;
  /** What playground pages showed of each turn (issue 41); pruned and reset with `conversations`. */
  playgroundTurns: PlaygroundTurnStore;
  /**
   * Forgets what only a while matters, as of `now`: place handovers (the next holder reads them
   * within seconds) older than HANDOVER_KEEP_MS, learned budgets older than BUDGET_KEEP_MS, and
   * playground owners of conversations whose mapping has been gone for a day.
   */
  housekeeping(now: number): Promise<{ handovers: number; budgets: number; playgroundOwners: number }>;
  /** The schema version applied (the newest migration recorded). */
  schemaVersion(): Promise<number>;
  isOpen(): boolean;
  /** Whether the database can take writes now, and if not why (what /readyz shows). */
  health(): StoreHealth;
  /** Commits a real write now and updates health(). */
  check(): Promise<StoreHealth>;
  onHealthChange(listener: (health: StoreHealth) => void): () => void;
  close(): Promise<void>;
}
