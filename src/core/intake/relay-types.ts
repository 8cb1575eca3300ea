import type { Logger } from 'pino';
import type { AllowList } from './admission.js';
import type { ChatService } from '../chat-port.js';
import type { BridgeMetrics } from '../metrics-port.js';
import type {
  Arrival,
  Clock,
  Connector,
  ConversationStore,
  EventStore,
  FeedbackStore,
  InFlightRecord,
  InFlightStore,
  MessageHandler,
  Place,
  RateLimitObserver,
  StopResult,
  Vote,
  VoteResult,
} from '../ports.js';
import type { RecoveryReport } from '../reply/recovery.js';
import type { ReplyHooks } from '../reply/upstream-reply.js';
import type { RateLimitScheduler } from '../budget/scheduler.js';
import type { RemoteStops } from './live-replies.js';
import type { SharedQueue } from './place-order.js';
import type { ContextSettings } from '../reply/thread-context.js';
import type { StoreHealthSource } from '../store-errors.js';

// The relay's settings and what it is built from. The ports several replicas give it are defined
// beside what uses them (SharedQueue: place-order.ts; RemoteStops: live-replies.ts).

export type { SharedQueue, SharedTicket, PlaceLease } from './place-order.js';
export type { RemoteStops } from './live-replies.js';

export interface RelaySettings {
  streaming: boolean;
  sessionIdleSeconds: number;
  maxMessageChars?: number;
  userMessagesPerMinute: number;
  maxConcurrentReplies: number;
  /** MAX_QUEUED_REPLIES: messages waiting for a slot or their place; beyond it a busy notice. Default 256. */
  maxQueuedReplies?: number;
  /** CHAT_REPLY_MAX_SECONDS: one reply's overall deadline. */
  replyMaxSeconds?: number;
  /** CHAT_REPLY_MAX_CHARS (enforced by the chat client; named in the notice). */
  replyMaxChars?: number;
  streamEditIntervalMs: number;
  /** FEEDBACK: finished replies carry thumbs up/down. Default false (main.ts passes the config). */
  feedback?: boolean;
  /** SHOW_STEPS: an agent's steps shown while they run. Default true. */
  showSteps?: boolean;
  /** SHOW_SOURCES: the sources an answer cites listed after it. Default true. */
  showSources?: boolean;
  /** CONVERSATION_RETENTION_DAYS: mappings unused this long are deleted. Default 90. */
  conversationRetentionDays?: number;
  /**
   * MAX_HELD_EVENTS: messages held in memory while the store cannot be used (store-hold.ts); past
   * it a busy notice. Default maxQueuedReplies.
   */
  maxHeldEvents?: number;
  /** HOLD_MAX_SECONDS: a message held longer is given up with the storage notice. Default 600. */
  holdMaxSeconds?: number;
  /** Messages waiting per place besides the one being answered. Default 10. */
  maxQueuePerPlace?: number;
  /**
   * CONTEXT_MODE, CONTEXT_MAX_MESSAGES, CONTEXT_MAX_CHARS: a new conversation's earlier messages.
   * main.ts always passes them; absent means off (tests that are not about context).
   */
  context?: ContextSettings;
  allow: { slack: AllowList; discord: AllowList };
}

/** Which upstream bot answers in a place (BOT_ROUTES and the default bot, resolved by the caller). */
export type BotRouter = (place: Place) => string;

export interface RelayDeps {
  chat: ChatService;
  botFor: BotRouter;
  conversations: ConversationStore;
  events: EventStore;
  inflight: InFlightStore;
  /** Where votes are kept; absent: votes are refused as unknown and none go upstream. */
  feedback?: FeedbackStore;
  metrics: BridgeMetrics;
  logger: Logger;
  clock: Clock;
  settings: RelaySettings;
  /** The one scheduler; made here when not given. */
  scheduler?: RateLimitScheduler;
  hooks?: ReplyHooks;
  /** After drain's timeout, how long aborted replies get to write their interruption note. */
  drainGraceMs?: number;
  /** REPLICA_ID, recorded as the owner of each reply in flight. */
  replicaId?: string;
  /** Several replicas: one answers in a place at a time (absent: this process is the only one). */
  sharedQueue?: SharedQueue;
  /** Several replicas: a Stop for a reply another replica writes is passed to it. */
  remoteStops?: RemoteStops;
  /** The store's health: messages an outage held are tried again once it says the store is back. */
  storeHealth?: StoreHealthSource;
  /** The store's own pruning beyond the core's ports, run with the hourly pruning (its own timer). */
  housekeeping?: (now: number) => Promise<unknown>;
}

export interface Relay extends MessageHandler {
  arrive(place: Place, eventId: string, at: number): Arrival;
  stop(replyKey: string, userId: string): Promise<StopResult>;
  stopPlace(place: Place, userId: string): Promise<StopResult>;
  vote(replyKey: string, userId: string, vote: Vote): Promise<VoteResult>;
  /** Edit replies a crash left streaming (text so far + note); reports what became of them. */
  recoverInterrupted(connectors: Connector[], records?: readonly InFlightRecord[]): Promise<RecoveryReport>;
  /** SIGTERM (the process's shutdown): refuse new messages, let replies finish for up to timeoutMs, interrupt the rest. */
  drain(timeoutMs: number): Promise<void>;
  stats(): { inFlight: number; queued: number };
  /** Feed for connectors' out-of-band rate-limit information (the relay's scheduler). */
  readonly rateLimits: RateLimitObserver;
}
