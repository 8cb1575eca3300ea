import type { ExpectedUpstreamId, Place, Platform, ReplyTarget } from './place.js';

// ---- persistence ports (src/store: better-sqlite3, or PostgreSQL shared by several replicas) ----
//
// Every store call answers with a promise (PostgreSQL answers later; SQLite and the in-memory test
// stores answer at once but still through a promise). Operations two replicas may race on are
// atomic in the store itself.

export interface ConversationRecord {
  place: Place;
  botId: string;
  /** The chat service's flavor when the mapping was made (ChatService.flavor). */
  flavor: string;
  /** Upstream conversation id; undefined while the upstream has not named a new conversation yet. */
  upstreamId: string | undefined;
  createdAt: number;
  lastUsedAt: number;
}

export interface ConversationStore {
  get(place: Place): Promise<ConversationRecord | undefined>;
  /** Insert or replace the mapping of a place. */
  put(rec: ConversationRecord): Promise<void>;
  touch(place: Place, at: number): Promise<void>;
  delete(place: Place): Promise<void>;
  /**
   * Compare-and-set: writes `next` only if the place's mapping is still what the caller read
   * (see ExpectedUpstreamId). Of two replicas renewing the same expired place, exactly one gets
   * true; the other reads the winner's mapping and uses it. A store only one process ever uses
   * may leave it out (the core then puts).
   */
  replaceIfUnchanged?(place: Place, expected: ExpectedUpstreamId, next: ConversationRecord): Promise<boolean>;
  /**
   * Forget mappings last used before `before` (CONVERSATION_RETENTION_DAYS); a later message in
   * such a place starts a new conversation. Returns how many were removed.
   */
  prune?(before: number): Promise<number>;
}

/** One turn of a stored transcript: what the user wrote, or the reply as the user saw it. */
export interface TranscriptTurn {
  role: 'user' | 'assistant';
  text: string;
  /** When it was recorded, epoch ms. */
  at: number;
}

/** How much of one conversation's transcript is kept: the newest turns within both bounds. */
export interface TranscriptBounds {
  maxTurns: number;
  /** Characters of all kept turns; the newest turn is kept even when it alone is over. */
  maxChars: number;
}

/**
 * The turns of conversations whose upstream keeps no state (Chat Completions): the bridge sends
 * them back each turn. Keyed by the bridge-minted conversation id (ConversationRecord.upstreamId).
 * A store deletes a conversation's turns with its mapping (ConversationStore.delete, a reset) and
 * prunes them with the mappings (ConversationStore.prune: older turns, and turns no mapping names).
 */
export interface TranscriptStore {
  /** The kept turns, oldest first, starting at a user turn. */
  turns(conversationId: string): Promise<TranscriptTurn[]>;
  /** Adds turns after the kept ones, then drops the oldest beyond `bounds`. */
  append(conversationId: string, turns: readonly TranscriptTurn[], bounds: TranscriptBounds): Promise<void>;
}

export interface EventStore {
  /** Records the event; false if it was already recorded (a duplicate, by any replica). Atomic. */
  recordDelivery(platform: Platform, eventId: string, at: number): Promise<boolean>;
  /** Whether the event was recorded (by any replica), without recording it. */
  wasDelivered(platform: Platform, eventId: string): Promise<boolean>;
  /** Forget events seen before `before` (epoch ms). Returns how many were removed. */
  prune(before: number): Promise<number>;
}

export type InFlightState = 'streaming' | 'done' | 'interrupted' | 'failed';

export interface InFlightRecord {
  id: number;
  platform: Platform;
  eventId: string;
  target: ReplyTarget;
  /** Platform ids of the reply's messages, in order. */
  messageIds: string[];
  /** Text of the last message as last written (to append the interruption note after a crash). */
  lastText: string;
  upstreamId: string | undefined;
  state: InFlightState;
  startedAt: number;
  updatedAt: number;
}

export interface InFlightBegin {
  platform: Platform;
  eventId: string;
  target: ReplyTarget;
  upstreamId?: string;
  at: number;
  /** The replica writing the reply (REPLICA_ID), so crash repair touches only replies of gone ones. */
  owner?: string;
}

export interface InFlightStore {
  begin(rec: InFlightBegin): Promise<number>;
  /** After each platform write: the reply's message ids and the current message's text. */
  progress(id: number, messageIds: string[], lastText: string, at: number): Promise<void>;
  setUpstreamId(id: number, upstreamId: string): Promise<void>;
  finish(id: number, state: Exclude<InFlightState, 'streaming'>, at: number): Promise<void>;
  /** Replies still `streaming` (left by a crash), optionally for one platform. */
  listOpen(platform?: Platform): Promise<InFlightRecord[]>;
  /** Remove finished records older than `before`. */
  prune(before: number): Promise<number>;
}

/** A finished reply that showed feedback buttons: what a vote on it needs to know. */
export interface FeedbackReply {
  replyKey: string;
  platform: Platform;
  placeKey: string;
  /** The upstream conversation the reply belongs to (undefined if the upstream never named it). */
  upstreamId: string | undefined;
  /** The upstream's id of the reply when it gave one, else the reply's last platform message id. */
  messageId: string;
  at: number;
}

export interface FeedbackVote {
  replyKey: string;
  userId: string;
  placeKey: string;
  upstreamId: string | undefined;
  messageId: string;
  vote: Vote;
  at: number;
  /** When it was sent upstream (metadata.feedback); undefined while pending. */
  deliveredAt: number | undefined;
}

export interface FeedbackStore {
  rememberReply(reply: FeedbackReply): Promise<void>;
  reply(replyKey: string): Promise<FeedbackReply | undefined>;
  /** Insert or replace the user's vote on the reply (pending again until delivered). */
  vote(v: Omit<FeedbackVote, 'deliveredAt'>): Promise<void>;
  /** The user's votes in an upstream conversation not yet sent upstream, oldest first. */
  pending(upstreamId: string, userId: string): Promise<FeedbackVote[]>;
  /** Mark votes as sent upstream. */
  delivered(votes: { replyKey: string; userId: string }[], at: number): Promise<void>;
  /** Every vote on replies of an upstream conversation, oldest first (the CLI). */
  forConversation(upstreamId: string): Promise<FeedbackVote[]>;
  /** Forget replies (not votes) remembered before `before`. */
  prune(before: number): Promise<number>;
  /** Forget votes cast before `before` (delivered or not). Returns how many were removed. */
  pruneVotes?(before: number): Promise<number>;
}

/** A thumbs up or down on a finished reply. */
export type Vote = 'up' | 'down';

/**
 * Who owns each playground conversation: the browser (its derived user id) that first wrote in it.
 * Kept in the store so that ownership outlives the playground's memory and a restart.
 */
export interface PlaygroundOwnerStore {
  /** The recorded owner of a conversation, if any. */
  ownerOf(conversation: string): Promise<string | undefined>;
  /**
   * Records `owner` unless the conversation has one already; answers the owner afterwards (of
   * two browsers, or replicas, racing on one id, both get the same winner). Atomic.
   */
  claim(conversation: string, owner: string, at: number): Promise<string>;
}

/**
 * One turn of a playground conversation as its page showed it (issue 41): the message typed, the
 * reply's messages with their last state, steps, files, and whether Retry replaced it. `shown` is
 * the playground's own JSON (src/connectors/playground/kept-turns.ts); the store keeps it as text.
 */
export interface PlaygroundTurnRecord {
  conversation: string;
  /** The turn's id (the eventId `send` returned), or the id of a message of no turn. */
  turnId: string;
  shown: string;
  /** When it was last saved (epoch ms): the conversations' retention prunes by it. */
  at: number;
}

/**
 * What a playground page showed, so a reload after a restart shows it again: kept per
 * conversation (the newest `keep` turns), gone with the conversation's mapping (reset) and by the
 * conversations' retention (ConversationStore.prune).
 */
export interface PlaygroundTurnStore {
  /**
   * Inserts the turn, or replaces what is kept of it (it keeps its place in the order: its first
   * save's), then forgets the conversation's turns older than the newest `keep`.
   */
  save(turn: PlaygroundTurnRecord, keep: number): Promise<void>;
  /** The conversation's kept turns, oldest first. */
  list(conversation: string): Promise<PlaygroundTurnRecord[]>;
}
