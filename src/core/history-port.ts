import type { BucketRef } from './bucket-port.js';
import type { ContextMessage } from './chat-port.js';

// A place's earlier messages as a connector reads them from its platform, for the context a new
// conversation starts with (reply/thread-context.ts).

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
