import type { Logger } from 'pino';
import type { BridgeMetrics } from './metrics-port.js';
import type { Clock, Platform, ReplySink } from './ports.js';
import type { WriteScheduler } from './scheduler.js';

// What a ReplyWriter is given and what it gives back (the mechanics are in reply-writer.ts).

export interface ReplyWriterOptions {
  sink: ReplySink;
  scheduler: WriteScheduler;
  clock: Clock;
  /** The shortest time between two writes of one message (STREAM_EDIT_INTERVAL_MS). */
  editIntervalMs: number;
  platform: Platform;
  metrics: BridgeMetrics;
  logger: Logger;
  /**
   * Records each write's text with the reply's message ids: an edit before it is sent (crash
   * repair must not roll the message back), a post once the platform gave its id.
   */
  progress?: (messageIds: string[], lastText: string) => void;
  /** Put before the reply once it has content (e.g. the renewed-conversation note). Read lazily. */
  prefix?: () => string;
  /** Room kept free in every message so that a note appended later (after a crash too) fits. */
  reserveChars?: number;
  /** Epoch ms the user's message arrived (for the first-text metric). */
  receivedAt?: number;
  onFirstText?: (at: number) => void;
  /** The reply's key, passed to every write (WriteOptions.replyKey) for the sink's controls. */
  replyKey?: string;
}

export interface FinishOptions {
  /** Appended to the text when the reply has content (e.g. the interruption note). */
  note?: string;
  /** The whole reply when it has no content (e.g. an error message). */
  replacement?: string;
  /** The last write shows thumbs up/down (WriteOptions.feedback). */
  feedback?: boolean;
}

export interface WriterResult {
  messageIds: string[];
  /** The reply's full text as composed (prefix, upstream text, note), without split fence lines. */
  text: string;
  /** Set when a write failed for good. */
  error?: unknown;
}
