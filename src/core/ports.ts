// The interfaces the edges implement. The core (relay, pump, scheduler) depends only on these.
// Connectors (Slack, Discord, the test connector) provide messages and reply sinks; the store
// provides persistence; src/upstream provides the ChatService (see chat-port.ts). "Where" is one
// value, the Place (place.ts), from the connector's intake to the reply sink and the store keys.
import type { MonospaceOptions } from './reply/tables.js';

import type { Attachment } from './reply/attachments.js';
import type { AgentFile, AgentStep, ContextMessage, ViewedItem } from './chat-port.js';
import type { Place, Platform, ReplyTarget } from './place.js';
import type { Vote } from './store-ports.js';

export * from './clock.js';
export * from './place.js';
export type { AgentFile, AgentStep, ContextMessage, ViewedItem } from './chat-port.js';

export interface IncomingMessage {
  /**
   * Dedup key, unique per user message on its platform. Slack: `${channel}:${ts}` of the user's
   * message (so app_mention and message for one mention collapse); Discord: the message id
   * (or `interaction:${id}`).
   */
  eventId: string;
  /** Where the conversation lives: its store key, its reply queue, the bot that answers there. */
  place: Place;
  /**
   * Where the message was written, for allowlists and the upstream's metadata. Usually the place
   * itself; differs for a Slack mention in a channel, whose place is the thread the reply opens.
   */
  origin: Place;
  /**
   * Every workspace the platform says this message comes from, for the workspace allowlist
   * (intake/admission.ts); each must be allowed. Default: the origin's. Slack names the team whose
   * install received the event, the team it was sent from, the author's own team in a shared
   * channel, and the Enterprise Grid organisation a team is known to belong to.
   */
  workspaces?: WorkspaceRef[];
  messageId: string;
  userId: string;
  userName?: string;
  /** The user's text with the bot's own mention removed, trimmed. */
  text: string;
  /**
   * The message's files, already downloaded by the connector (which owns the token): text-like
   * files carry their text, others a description, skipped ones the reason. A message with files
   * and no text is still answered.
   */
  attachments?: Attachment[];
  isDm: boolean;
  mentionsBot: boolean;
  /** A forwarded message (Discord): its text is the forward's, marked; `metadata.forwarded`. */
  forwarded?: boolean;
  /** What the user was viewing when writing (Slack's agent context); `metadata.viewing`. */
  viewing?: ViewedItem[];
  isFromBot: boolean;
  /** Epoch ms when the connector received it. */
  receivedAt: number;
  /** Where the reply goes. Created by the connector for this message. */
  sink: ReplySink;
  /** Its place in the place's queue, taken when the event arrived (MessageHandler.arrive). */
  arrival?: Arrival;
  /**
   * The place's earlier messages, read from the platform when a new upstream conversation starts
   * there (see thread-context.ts). Absent when the place cannot hold any the assistant has not
   * seen: a thread this very message opens (a Slack mention at top level, a Discord thread made
   * from it).
   */
  history?: HistoryReader;
}

/** A workspace a message comes from, and the organisation it is known to belong to (if any). */
export interface WorkspaceRef {
  id: string;
  /** Slack Enterprise Grid org: listing it admits its workspaces. */
  organizationId?: string;
}

/** One earlier message as a connector reads it: the context entry plus its platform id. */
export interface PlaceMessage extends ContextMessage {
  /** Platform message id (Slack ts, Discord id): the core leaves out the user's current one. */
  id: string;
}

export interface HistoryRequest {
  /** At most this many messages. */
  limit: number;
  /** Only messages older than this one (the user's current message). */
  beforeMessageId?: string;
  /** The next page of the same read: a `PlaceHistoryPage.next.cursor` the reader gave before. */
  cursor?: string;
}

/**
 * One page of a read that did not get everything at once (a platform that caps a read, or pages
 * a thread from its start). `next` continues it: `newer` when this page came from the old end
 * (the messages just before `beforeMessageId` are still to come), `older` when it came from the
 * newest end.
 */
export interface PlaceHistoryPage {
  /** Newest first. */
  messages: PlaceMessage[];
  next?: { cursor: string; direction: 'newer' | 'older' };
}

/** A port each connector provides per message: the recent history of the message's place. */
export interface HistoryReader {
  /** Buckets one read counts against (Slack conversations.* tier 3, Discord the channel's reads). */
  readonly buckets: BucketRef[];
  /**
   * The place's most recent messages, newest first, at most `limit`. The bridge's own messages
   * are role `assistant`; mentions are display names. Throws on a platform error; a 429 is a
   * PlatformRateLimitedError. A page when the platform gave part of them (see PlaceHistoryPage).
   */
  recent(req: HistoryRequest): Promise<PlaceMessage[] | PlaceHistoryPage>;
  /**
   * The place's messages the bridge already received in its events (a bounded record kept in
   * memory by the connector), newest first, at most `limit`, before `beforeMessageId`: no
   * platform call, no budget. Context ends with these when a read is capped or skipped.
   */
  recorded?(req: HistoryRequest): Promise<PlaceMessage[]>;
  /** The bridge's own finished reply in the place, for the record (its text as composed). */
  remember?(reply: { messageId: string; text: string }): void;
}

/** A rate-limit bucket a write counts against, with the budget assumed until the platform says more. */
export interface BucketRef {
  /** Stable key, e.g. `discord:channel:123` or `slack:T1:chat.update`. */
  key: string;
  /** Writes allowed per window (a default; learned values from headers replace it). */
  limit: number;
  windowMs: number;
  /**
   * The bucket counts one place's writes (a channel's posts). Replicas take turns in a place, so
   * such a bucket is not split between them: it is handed over with the place (PlaceLocks).
   */
  perPlace?: boolean;
  /**
   * Per-place buckets the platform limits alike (Slack: every channel's posts, "about one a
   * second, short bursts allowed") name one family: what one of them learns, all of them start
   * from, and one at a time probes for a larger burst (budget/bucket-table.ts).
   */
  family?: string;
  /**
   * The key of a wider bucket this place's writes also count in (Slack: a channel's share of the
   * workspace's chat.update). It limits nothing until a 429 of the wider one is blamed on this
   * place by the evidence (budget/place-blame.ts).
   */
  placeOf?: string;
}

/** What the platform told us about a bucket on a successful write (from rate-limit headers). */
export interface RateLimitInfo {
  bucket: string;
  limit?: number;
  remaining?: number;
  /** Milliseconds until the bucket refills. */
  resetAfterMs?: number;
}

export interface WriteResult {
  rateLimits?: RateLimitInfo[];
  /**
   * The platform refused a richer form of this write (blocks, a table, Markdown, components) and
   * the sink sent the same words in a plainer one: the reasons (the platform's error codes), each
   * counted once (`BridgeMetrics.richFallback`).
   */
  fallbacks?: string[];
}

export interface PostResult extends WriteResult {
  /** Platform message id (Slack ts, Discord message id). */
  messageId: string;
}

/** Thrown by a sink when the platform answered 429; the scheduler backs the bucket off. */
export class PlatformRateLimitedError extends Error {
  override readonly name = 'PlatformRateLimitedError';
  constructor(
    readonly bucket: string,
    readonly retryAfterMs: number,
    /** true when the platform says the limit is global (Discord) */
    readonly global = false,
  ) {
    super(`rate limited on ${bucket} for ${retryAfterMs} ms`);
  }
}

/** Thrown by a sink for a write that will never succeed (message deleted, no permission, ...). */
export class PlatformWriteError extends Error {
  override readonly name = 'PlatformWriteError';
  constructor(
    message: string,
    readonly code: string,
    /** true when retrying the same write could work (network); false when it cannot */
    readonly retryable = false,
  ) {
    super(message);
  }
}

/**
 * `PlatformWriteError.code` of a write the platform refused for its form (a block, Markdown,
 * buttons) after the sink stepped down to a plainer form: the write goes again at once, on a new
 * grant, since the refused call spent the platform's budget as any call does.
 */
export const PLAIN_FALLBACK = 'form_refused';

export interface WriteOptions {
  /** The last write of the reply's current message (stream stop, final render). */
  final: boolean;
  /** 0 for the first message of a reply, 1.. for continuations. */
  part: number;
  /**
   * The reply's key (MessageHandler.stop / vote): a sink that can carry controls shows a Stop
   * control on every write that is not `final`, and none on final writes. Absent: no controls.
   */
  replyKey?: string;
  /** The reply's very last write (its last message, final text): the controls go away. */
  last?: boolean;
  /** With `last`: show thumbs up/down (FEEDBACK on, the reply finished). */
  feedback?: boolean;
  /**
   * SHOW_STEPS, for a sink that `showsSteps`: the agent's steps so far (oldest first), given on
   * every write that is not `final` once there are any; a final write never has them (the step
   * line goes away). Such a write may have empty text: steps before any answer text.
   */
  steps?: readonly AgentStep[];
  /** With `last`: the images and files the sink said it shows (`ReplySink.showsFile`), to show with it. */
  files?: readonly AgentFile[];
}

/**
 * Where one reply is shown. The pump gives it the *full* text of the current message each time;
 * a sink that appends (Slack native streams) sends only what is new.
 */
export interface ReplySink {
  /** Characters allowed in one message (Discord 2000, Slack edit mode 3900, Slack native ~11000). */
  readonly maxChars: number;
  /** A message older than this is finished and the text continues in a new one (Slack native streams). */
  readonly maxMessageAgeMs?: number;
  /**
   * The sink must see a final write even when the text has not changed since the last edit
   * (Slack native streams: stopStream, and words held back until final). Otherwise an unchanged
   * final write is skipped: it would only spend a rate-limit slot.
   */
  readonly needsFinalWrite?: boolean;
  /**
   * The platform has no table: Markdown tables in the reply become aligned monospace blocks
   * (core/reply/tables.ts), cut by columns beyond `maxLineWidth`, before the text is split.
   */
  readonly monospaceTables?: MonospaceOptions;
  /** Buckets a post or an edit counts against. */
  buckets(op: 'post' | 'edit'): BucketRef[];
  /** Show that work started (typing, assistant status, reaction). Must not throw. */
  showWorking(): Promise<void>;
  /**
   * The sink shows an agent's steps in the reply's messages (`WriteOptions.steps`): a step that
   * runs before any answer text is posted as a message of its own, edited into the answer later.
   * Such writes are intermediate ones, the first dropped when budgets are short.
   */
  readonly showsSteps?: boolean;
  /**
   * While nothing is shown yet (the working indicator is up), name the running step there, or
   * none (`undefined`): Slack's assistant status. Costs no write budget. Must not throw.
   */
  showStep?(step: AgentStep | undefined): Promise<void>;
  /**
   * The sink shows this image or file itself with the reply's last write (`WriteOptions.files`):
   * an image URL as an image, bytes as an upload. Absent or false: the reply names it in a line.
   */
  showsFile?(file: AgentFile): boolean;
  /** Stop the working indicator. Must not throw. */
  clearWorking(): Promise<void>;
  post(text: string, opts: WriteOptions): Promise<PostResult>;
  edit(messageId: string, text: string, opts: WriteOptions): Promise<WriteResult>;
  /** Serializable description of the destination so a restart can edit the messages (see InFlightRecord). */
  readonly target: ReplyTarget;
  /**
   * Where a refusal (per-user limit, busy) is told. Absent: a post like the reply's, public.
   * Either way it opens nothing (no thread) and waits behind every write of a reply.
   */
  readonly refusal?: RefusalChannel;
}

/** How the bridge tells the asker why their message is not answered (see ReplySink.refusal). */
export interface RefusalChannel {
  /** Only the asker sees it (Slack ephemeral, a Discord interaction's ephemeral reply). */
  readonly private: boolean;
  /** Buckets one notice counts against. */
  readonly buckets: BucketRef[];
  /** Send it; opens no thread. Throws like a sink write (a 429 is a PlatformRateLimitedError). */
  send(text: string): Promise<WriteResult>;
}

export interface Connector {
  readonly platform: Platform;
  /** Connect and start delivering messages to the handler. Resolves once connected. */
  start(handler: MessageHandler): Promise<void>;
  /** The process shuts down: take no more events and disconnect (after the drain). */
  shutdown(): Promise<void>;
  /** Connected right now (for /readyz). */
  isReady(): boolean;
  /** For /readyz, when a reason says more than `isReady`: `true`, or why not (e.g. which shards are down). */
  readiness?(): true | string;
  /**
   * The first step of a shutdown, before the drain: take no more events but keep writing (Slack's
   * Socket Mode closes its connection, so Slack sends events to the other replicas).
   */
  closeIntake?(): Promise<void>;
  /** This replica's share of the platform's budgets (1 / live replicas), whenever it changes. */
  setBudgetShare?(share: number): void;
  /**
   * A reply left streaming by a crash: edit its last message to `text` (the text so far plus
   * the interruption note). Best effort; throws on failure.
   */
  markInterrupted(target: ReplyTarget, messageId: string, text: string): Promise<void>;
  /**
   * A reply a crash cut before anything was shown: say so in its place (a new message), since the
   * user's message was already taken and will not be delivered again. Best effort; throws on failure.
   */
  postInterrupted?(target: ReplyTarget, text: string): Promise<void>;
  /**
   * After start: the connector can never receive again (e.g. Discord closed the gateway for good:
   * the token was reset). The process then ends non-zero, so that its supervisor restarts it.
   */
  onFatal?(listener: (err: Error) => void): void;
}

export interface HandleResult {
  status:
    | 'answered'
    | 'ignored' // bot author, not for us, empty
    | 'duplicate'
    | 'not_allowed'
    | 'user_rate_limited'
    | 'queue_full'
    | 'reset'
    | 'stopped' // `stop` written by the asker while their reply streamed
    | 'failed'
    | 'interrupted';
}

/** A message's place in its place's queue, taken the moment its event arrived. */
export interface Arrival {
  /** Settles once it is in its place's queue across replicas (at once with one); never rejects. */
  recorded: Promise<void>;
  /** The message will not be handed to handle(): give its place up. Idempotent. */
  leave(): void;
}

export interface MessageHandler {
  /**
   * Take the message's place in its place's queue the moment its event arrives, before the
   * connector's own awaits (user names, files): with several replicas, a later message of the
   * place at another replica must not overtake it meanwhile. Pass it on as msg.arrival, or
   * leave() it when the message is dropped.
   */
  arrive?(place: Place, eventId: string, at: number): Arrival;
  /**
   * Handle a message; resolves when the reply is complete (or refused). Connectors must not await
   * it inside a platform ack path.
   */
  handle(msg: IncomingMessage): Promise<HandleResult>;
  /** Start a fresh conversation for a place (Discord /reset, Slack `reset`). */
  reset(place: Place): Promise<void>;
  /**
   * A Stop control was used on a reply (its WriteOptions.replyKey) by `userId`. Only the asker
   * may stop a reply; a reply that already ended is `not_found` (nothing to do).
   */
  stop?(replyKey: string, userId: string): StopResult | Promise<StopResult>;
  /**
   * A Stop that names the place, not the reply (Slack's agent-session Stop on a native stream):
   * the reply being written there, if any, stopped by the same rules as `stop`.
   */
  stopPlace?(place: Place, userId: string): StopResult | Promise<StopResult>;
  /** A thumbs up/down on a finished reply; the user's last vote on a reply wins. */
  vote?(replyKey: string, userId: string, vote: Vote): Promise<VoteResult>;
}

export type StopResult = 'stopped' | 'not_owner' | 'not_found';
export type VoteResult = 'recorded' | 'not_found';

// ---- persistence ports: see store-ports.ts ----
export * from './store-ports.js';

/**
 * Out-of-band rate-limit feedback: connectors whose SDK reports limits on its own events
 * (discord.js REST `response`/`rateLimited`, Slack 429s outside a sink write) feed the one
 * scheduler through this. The core's scheduler implements it.
 */
export interface RateLimitObserver {
  observe(info: RateLimitInfo): void;
  limited(bucket: string, retryAfterMs: number): void;
}

export const ignoreRateLimits: RateLimitObserver = { observe: () => {}, limited: () => {} };

// ---- learned rate-limit budgets (the scheduler's memory across restarts) ----

/** A lesson: what the scheduler learned about one bucket, kept across restarts and replicas (see src/core/budget). */
export interface Lesson {
  /** Bucket key (BucketRef.key). */
  key: string;
  /** Sustained writes per minute. */
  perMinute: number;
  /** Writes allowed at once (token bucket capacity). */
  burst: number;
  /** When the last 429 came (epoch ms), and the rate (per minute) assumed then. */
  limitedAt?: number;
  limitedPerMinute?: number;
  updatedAt: number;
}

/**
 * Keeps learned budgets so a restart does not relearn them by 429s, and so that replicas sharing a
 * database learn from each other (each row is the whole platform's bucket). Implemented in
 * src/store; asynchronous, since PostgreSQL is.
 */
export interface BudgetStore {
  /** Every stored row. */
  load(): Promise<Lesson[]>;
  /** Insert or replace the row of `b.key`, unless the stored row has a newer `updatedAt`. */
  save(b: Lesson): Promise<void>;
}
