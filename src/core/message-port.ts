import type { Attachment } from './reply/attachments.js';
import type { ViewedItem } from './chat-port.js';
import type { HistoryReader } from './history-port.js';
import type { Place } from './place.js';
import type { ReplySink } from './sink-port.js';
import type { Vote } from './store-ports.js';

// A user's message as a connector hands it to the core, and the handler (the relay) it is handed
// to: what the message is, where its reply goes, and what became of it.

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
   * Where the message was written, for allowlists and the upstream's metadata: its channel, and
   * its thread when it was written in one. Usually the place itself; differs for a mention in a
   * channel whose reply opens a thread (Slack; Discord in thread mode): the place is that thread.
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
